package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/metrics"
)

// RunFile is the name of the per-run record inside a run directory.
const RunFile = "run.json"

// LoadedRun is one run.json together with where it was read from.
type LoadedRun struct {
	Path string
	*record.Run
}

// LoadOptions configure LoadRuns.
type LoadOptions struct {
	// IncludeUnfinished keeps runs whose status is not "done" (running or
	// failed); by default they are skipped and reported in Skipped.
	IncludeUnfinished bool
}

// Loaded is the result of LoadRuns.
type Loaded struct {
	Runs []LoadedRun
	// Skipped lists "path (status)" for each run left out.
	Skipped []string
	// Warnings name the run.json files that could not be read (left out).
	Warnings []string
}

// LoadRuns reads run.json files. Each path may be a run.json file, a
// directory holding one, or a directory tree that is searched recursively
// (hidden directories are skipped). Runs are returned sorted by path so that
// every report built from them is deterministic.
func LoadRuns(paths []string, opt LoadOptions) (*Loaded, error) {
	if len(paths) == 0 {
		return nil, errors.New("reports: no run paths given")
	}
	seen := map[string]bool{}
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		if !st.IsDir() {
			if !seen[p] {
				seen[p] = true
				files = append(files, p)
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && len(d.Name()) > 1 && d.Name()[0] == '.' {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Name() == RunFile && !seen[path] {
				seen[path] = true
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reports: walk %s: %w", p, err)
		}
	}
	sort.Strings(files)
	out := &Loaded{}
	same := map[string]string{}
	for _, f := range files {
		r, err := record.Read(f)
		if err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s is unreadable, left out: %v", f, err))
			continue
		}
		if err := checkValues(f, r); err != nil {
			return nil, err
		}
		if r.Status == "done" {
			k := runKey(r)
			if prev, dup := same[k]; dup {
				return nil, fmt.Errorf("reports: %s and %s are the same run (data set, method, settings and seed %d): a copy of a run directory would count it twice; report one of them", prev, f, r.Seed)
			}
			same[k] = f
		}
		// record.Metrics decodes null as NaN (undefined: left out of means
		// and counted in the cell's n) and "+Inf" as +Inf.
		if r.Status != "done" && !opt.IncludeUnfinished {
			st := r.Status
			if st == "" {
				st = "no status"
			}
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s (%s)", f, st))
			continue
		}
		out.Runs = append(out.Runs, LoadedRun{Path: f, Run: r})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reports: no %s found under %v", RunFile, paths)
	}
	return out, nil
}

// runKey identifies a run by what it ran: data set, method keys, settings
// and seed (two directories with one key hold the same run twice).
func runKey(r *record.Run) string {
	b, _ := json.Marshal([]any{r.Dataset, r.Method, r.Config, r.Seed})
	return string(b)
}

// checkValues refuses a record holding an impossible value: a fraction
// metric (R@k, MAP@R, NMI, …) outside [0, 1]. No computation writes one,
// so the file is corrupt, and averaging it would print a wrong number.
func checkValues(path string, r *record.Run) error {
	check := func(where string, m record.Metrics) error {
		for k, v := range m {
			if metrics.IsPercent(k) && !math.IsNaN(v) && (v < 0 || v > 1) {
				return fmt.Errorf("reports: %s: %s %s = %v is impossible (a fraction in [0, 1]): the file is corrupt", path, where, k, v)
			}
		}
		return nil
	}
	if err := check("final", r.Final); err != nil {
		return err
	}
	for _, e := range r.History {
		if err := check(fmt.Sprintf("epoch %d", e.Epoch), e.Metrics); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("epoch %d validation", e.Epoch), e.ValMetric); err != nil {
			return err
		}
	}
	return nil
}

// SplitList splits a flag's list s on sep, trimming blanks and dropping
// empty items.
func SplitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// LoadFinished loads the runs under paths (the finished ones unless
// includeUnfinished) for a figure, and refuses paths that hold none.
func LoadFinished(paths []string, includeUnfinished bool) ([]LoadedRun, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	l, err := LoadRuns(paths, LoadOptions{IncludeUnfinished: includeUnfinished})
	if err != nil {
		return nil, err
	}
	if len(l.Runs) == 0 {
		return nil, fmt.Errorf("no finished runs under %s", strings.Join(paths, " "))
	}
	return l.Runs, nil
}

// WriteOutput writes b to path atomically, or to stdout for "" or "-".
func WriteOutput(stdout io.Writer, path string, b []byte) error {
	if path == "" || path == "-" {
		_, err := stdout.Write(b)
		return err
	}
	return atomicfile.WriteBytes(path, b)
}
