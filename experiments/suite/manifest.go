package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/record"
)

// ManifestFile lists a suite's cells in its output directory, so that
// `dmlbench report` on a suite that is still running can say how many
// cells are missing.
const ManifestFile = "suite.json"

// Manifest is the content of ManifestFile.
type Manifest struct {
	// Suite is the absolute path of the suite file.
	Suite string `json:"suite"`
	// Cells are the run directories relative to the output directory,
	// in cell order (cell N is Cells[N]).
	Cells []string `json:"cells"`
	// Commands fingerprint each cell: its command line without --out and
	// --quiet, by run directory. A cell that has started is not run again
	// under another command (CheckManifest).
	Commands map[string]string `json:"commands,omitempty"`
}

// command is the fingerprint of job j's settings.
func command(j Job) string {
	var parts []string
	for i := 0; i < len(j.Args); i++ {
		switch j.Args[i] {
		case "--out":
			i++
			continue
		case "--quiet":
			continue
		}
		parts = append(parts, j.Args[i])
	}
	return strings.Join(parts, " ")
}

// CheckManifest refuses a suite whose started cells (a run.json exists)
// were run under another command than the suite now gives them: their
// results would mix two settings under one name. New cells are fine.
func CheckManifest(out string, jobs []Job) error {
	b, err := os.ReadFile(filepath.Join(out, ManifestFile))
	if err != nil {
		return nil // a new directory, or one without a manifest
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(out, ManifestFile), err)
	}
	var changed []string
	for _, j := range jobs {
		old, ok := m.Commands[filepath.ToSlash(j.Name)]
		if !ok || old == command(j) {
			continue
		}
		if _, err := os.Stat(filepath.Join(j.Dir, "run.json")); err == nil {
			changed = append(changed, j.Name)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	more := ""
	if len(changed) > 3 {
		more = fmt.Sprintf(" and %d more", len(changed)-3)
		changed = changed[:3]
	}
	return fmt.Errorf("suite: the settings of %s%s changed since %s was run: restore the suite file, remove those run directories, or use a new --out", strings.Join(changed, ", "), more, out)
}

// WriteManifest records the cells of a suite in out/suite.json.
func WriteManifest(out, suiteFile string, jobs []Job) error {
	abs, err := filepath.Abs(suiteFile)
	if err != nil {
		return err
	}
	m := Manifest{Suite: abs, Cells: make([]string, len(jobs)), Commands: map[string]string{}}
	for i, j := range jobs {
		m.Cells[i] = filepath.ToSlash(j.Name)
		m.Commands[m.Cells[i]] = command(j)
	}
	// Temporary files of suite processes killed while writing it; other
	// live writers hold theirs for milliseconds, not a minute.
	_, _ = atomicfile.CleanTemps(out, time.Minute, ManifestFile)
	return record.WriteAtomic(filepath.Join(out, ManifestFile), m)
}

// Missing reads dir/suite.json and counts the cells whose run.json is not
// "done"; ok is false when dir holds no manifest.
func Missing(dir string) (missing, total int, suiteFile string, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		if os.IsNotExist(err) {
			return 0, 0, "", false, nil
		}
		return 0, 0, "", false, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, 0, "", false, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	for _, c := range m.Cells {
		if !IsDone(filepath.Join(dir, filepath.FromSlash(c))) {
			missing++
		}
	}
	return missing, len(m.Cells), m.Suite, true, nil
}
