package tune

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

// A bad --parallel or --executor is a usage error before anything is
// written.
func TestExecuteRefusesBadChoices(t *testing.T) {
	p := &Plan{Spec: &Spec{}, Out: t.TempDir() + "/never"}
	for _, inv := range []Invocation{
		{Executor: "local", Parallel: 0},
		{Executor: "slurmm", Parallel: 1},
	} {
		inv.Stdout, inv.Stderr = io.Discard, io.Discard
		if err := p.Execute(context.Background(), Change{}, inv); !usage.Is(err) {
			t.Errorf("%+v: %v, want a usage error", inv, err)
		}
	}
}

func TestIsOutDir(t *testing.T) {
	dir := t.TempDir()
	if IsOutDir(dir) {
		t.Fatal("an empty directory is taken for a tuning's")
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsOutDir(dir) {
		t.Fatal("a directory with tune.json is not taken for a tuning's")
	}
}
