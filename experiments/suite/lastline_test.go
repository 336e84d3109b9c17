package suite

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// A failing child is reported with its last stderr line, not a bare
// "exit status 1".
func TestFailedChildShowsLastLine(t *testing.T) {
	dir := t.TempDir()
	s, err := Parse([]byte(`grid: {dataset: d, loss: margin, seed: 0}`))
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := s.Jobs(dir)
	r := &Runner{Bin: "dmlbench", Exec: func(_ context.Context, _ string, _ []string, o, e io.Writer) error {
		io.WriteString(o, "epoch 1\n")
		io.WriteString(e, "warning: something\ndmlbench: --lr must be > 0\n")
		return errors.New("exit status 1")
	}}
	res, _ := r.Run(context.Background(), jobs)
	got := res.Errors["d/margin/s0"]
	if got == nil || !strings.Contains(got.Error(), "exit status 1 (dmlbench: --lr must be > 0)") {
		t.Fatalf("error %v; want the child's last line", got)
	}
}

func TestParseEmpty(t *testing.T) {
	if _, err := Parse(nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty suite: %v", err)
	}
}
