// Package celltest serves the tests of command cells: it builds their fake
// trainer (experiments/cell/testdata/faketrainer), a deterministic program
// that plays a user's trainer and its faults.
package celltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildFakeTrainer builds the fake trainer from src (its package
// directory, relative to the calling test's) into a new temporary
// directory and returns the binary's path; the caller removes
// filepath.Dir of it when done.
func BuildFakeTrainer(src string) (string, error) {
	tmp, err := os.MkdirTemp("", "faketrainer")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(tmp, "faketrainer")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(gobin, "build", "-o", bin, src).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("building the fake trainer: %v\n%s", err, out)
	}
	return bin, nil
}
