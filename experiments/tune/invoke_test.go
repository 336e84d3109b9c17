package tune

import (
	"context"
	"io"
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
