package suite

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

// --cell N out of range is a usage error; a dry run prints the cell's
// state and command line and runs nothing.
func TestRunOneCell(t *testing.T) {
	dir := t.TempDir()
	jobs := []Job{{Name: "a/s0", Dir: filepath.Join(dir, "a/s0"), Args: []string{"run", "--out", filepath.Join(dir, "a/s0")}}}
	r := &Runner{Bin: "/bin/false"}
	var out, log bytes.Buffer
	if err := RunOneCell(context.Background(), r, jobs, 1, false, &out, &log); !usage.Is(err) {
		t.Fatalf("cell 1 of 1: %v", err)
	}
	if err := RunOneCell(context.Background(), r, jobs, 0, true, &out, &log); err != nil {
		t.Fatal(err)
	}
	if want := "todo   0 a/s0\n     /bin/false run --out " + filepath.Join(dir, "a/s0") + "\n"; out.String() != want || log.Len() != 0 {
		t.Fatalf("dry run printed %q (log %q), want %q", out.String(), log.String(), want)
	}
}
