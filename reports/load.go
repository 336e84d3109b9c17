package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/dmlbench/dmlbench/record"
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
	for _, f := range files {
		r, err := record.Read(f)
		if err != nil {
			return nil, err
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
