package tune

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Bwrap is the bubblewrap program `isolate: true` runs tuning commands
// under (Debian package bubblewrap).
const Bwrap = "bwrap"

// isolation is the bubblewrap prefix of a tuning command: the whole file
// system as it is (devices included, so GPUs stay usable), except the data
// set's directory, which is replaced, read-only, by the training-only view.
// The command then cannot open a test file by any path that leads into the
// data set's directory (symlinks to it resolve into the replaced mount); a
// copy of the test files elsewhere on the machine stays readable. The
// child dies with bwrap.
func isolation(view, dataDir, cellDir string) ([]string, error) {
	real, err := filepath.Abs(dataDir)
	if err == nil {
		real, err = filepath.EvalSymlinks(real)
	}
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(real, cellDir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("isolate: the cell directory %s lies inside the data set's directory %s, which a tuning command cannot see; put out: elsewhere", cellDir, real)
	}
	return []string{Bwrap, "--dev-bind", "/", "/", "--ro-bind", view, real, "--die-with-parent", "--"}, nil
}

// checkIsolation is the spec problem of `isolate: true` where bubblewrap
// is missing or cannot run (no user namespaces), or "".
func checkIsolation() string {
	if _, err := exec.LookPath(Bwrap); err != nil {
		return "isolate: true needs bubblewrap (bwrap) on PATH (Debian: apt-get install bubblewrap)"
	}
	if out, err := exec.Command(Bwrap, "--dev-bind", "/", "/", "--", "true").CombinedOutput(); err != nil {
		return fmt.Sprintf("isolate: true: bwrap cannot run here (%s)", strings.TrimSpace(string(out)))
	}
	return ""
}
