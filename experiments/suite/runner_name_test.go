package suite

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// tune runs its cells through a Runner named "tune": its failures,
// interruptions and skips say "tune", never "suite".
func TestRunnerNamesItsCommand(t *testing.T) {
	s, _ := Parse([]byte(`grid: {dataset: d, loss: [broken, margin], seed: 0}`))
	for _, name := range []string{"", "tune"} {
		want := name
		if want == "" {
			want = "suite"
		}
		dir := t.TempDir()
		jobs, _ := s.Jobs(dir)
		var calls atomic.Int32
		var log bytes.Buffer
		r := &Runner{Bin: "dmlbench", Exec: fakeTrainer(&calls), Name: name, Log: &log}
		_, err := r.Run(context.Background(), jobs)
		if err == nil || !strings.HasPrefix(err.Error(), want+": 1 of 2 runs failed") {
			t.Errorf("%q: failure %v", name, err)
		}
		_, _ = r.Run(context.Background(), jobs)
		if !strings.Contains(log.String(), want+": 1 of 2 runs already done, skipped") {
			t.Errorf("%q: log %q", name, log.String())
		}
		ctx, cancel := context.WithCancel(context.Background())
		r.Exec = func(c context.Context, _ string, _ []string, _, _ io.Writer) error {
			cancel()
			<-c.Done()
			return c.Err()
		}
		_, err = r.Run(ctx, jobs)
		if err == nil || !strings.HasPrefix(err.Error(), want+" interrupted: ") {
			t.Errorf("%q: interruption %v", name, err)
		}
		if other := map[string]string{"suite": "tune", "tune": "suite"}[want]; strings.Contains(log.String()+err.Error(), other) {
			t.Errorf("%q: %q names %s", name, log.String()+err.Error(), other)
		}
	}
}
