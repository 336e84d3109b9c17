package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/record"
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
}

// WriteManifest records the cells of a suite in out/suite.json.
func WriteManifest(out, suiteFile string, jobs []Job) error {
	abs, err := filepath.Abs(suiteFile)
	if err != nil {
		return err
	}
	m := Manifest{Suite: abs, Cells: make([]string, len(jobs))}
	for i, j := range jobs {
		m.Cells[i] = filepath.ToSlash(j.Name)
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
