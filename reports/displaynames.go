package reports

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Names maps the keys dmlbench prints (row labels such as "pixels/-" or
// "multisimilarity/none", file paths, sweep parameters) to the names a
// paper shows. A key it does not hold is shown as it is.
type Names map[string]string

// Name is the display name of key.
func (n Names) Name(key string) string {
	if v, ok := n[key]; ok {
		return v
	}
	return key
}

// ParseNames reads display names from pairs ("key=Name", the --rename
// flag, repeatable) and from file (the names file: one key=Name per line;
// blank lines and lines starting with # are skipped); pairs override the
// file. The key is everything before the first "=", both sides trimmed.
func ParseNames(pairs []string, file string) (Names, error) {
	n := Names{}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("reports: names file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			s := strings.TrimSpace(sc.Text())
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			if err := n.add(s); err != nil {
				return nil, fmt.Errorf("reports: %s:%d: %w", file, line, err)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reports: names file: %w", err)
		}
	}
	for _, p := range pairs {
		if err := n.add(p); err != nil {
			return nil, fmt.Errorf("reports: --rename: %w", err)
		}
	}
	return n, nil
}

func (n Names) add(pair string) error {
	k, v, ok := strings.Cut(pair, "=")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" || v == "" {
		return fmt.Errorf("%q: want KEY=Name (e.g. pixels/-=Pixels)", pair)
	}
	n[k] = v
	return nil
}

// Rename gives every row of rep its display name (Row.Label) and keeps
// the key in Row.Key; the baseline and the published rows are renamed
// too. Unknown keys are reported, so a misspelt --rename does not pass
// silently.
func (rep *Report) Rename(n Names) (unused []string) {
	if len(n) == 0 {
		return nil
	}
	used := map[string]bool{}
	for _, t := range rep.Tables {
		for _, r := range t.Rows {
			if r.Key == "" {
				r.Key = r.Label
			}
			if v, ok := n[r.Key]; ok {
				r.Label, used[r.Key] = v, true
			}
		}
		for i := range t.References {
			if v, ok := n[t.References[i].Approach]; ok {
				used[t.References[i].Approach] = true
				t.References[i].Approach = v
			}
		}
	}
	for k := range n {
		if !used[k] {
			unused = append(unused, k)
		}
	}
	return unused
}
