package trainers

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestConfigSourcesRefusals(t *testing.T) {
	for _, c := range []struct {
		s    ConfigSources
		want string
	}{
		{ConfigSources{Out: "d", Resume: true, ConfigSet: true, ConfigFile: "c.yaml"}, "--config does not apply"},
		{ConfigSources{Out: "d"}, "--loss is required"},
	} {
		if _, err := c.s.Resolve(); !usage.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error with %q", c.s, err, c.want)
		}
	}
}

func TestConfigSourcesDatasetBatchSize(t *testing.T) {
	for _, name := range fixtures.Names() {
		b := fixtures.DefaultBatchSize(name)
		if b == 0 {
			continue
		}
		set := func(given bool) int {
			s := ConfigSources{BatchSizeSet: given, Flags: func(cfg *Config) error {
				cfg.Dataset, cfg.Loss = name, "margin"
				if given {
					cfg.BatchSize = 2 * b
				}
				return nil
			}}
			cfg, err := s.Resolve()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return cfg.BatchSize
		}
		if got := set(false); got != b {
			t.Errorf("%s: batch size %d, want the data set's %d", name, got, b)
		}
		if got := set(true); got != 2*b {
			t.Errorf("%s: batch size %d, want the given %d", name, got, 2*b)
		}
		return
	}
	t.Skip("no data set carries its own batch size")
}

func TestInterruptedErrorAndShellQuote(t *testing.T) {
	if got := ShellQuote("runs/a b'c"); got != `'runs/a b'\''c'` {
		t.Errorf("ShellQuote: %s", got)
	}
	dir := t.TempDir()
	err := InterruptedError(fmt.Errorf("epoch 1: %w", ErrInterrupted), dir, "dmlbench")
	if !strings.Contains(err.Error(), "before the first checkpoint") {
		t.Errorf("no checkpoint in %s: %v", filepath.Base(dir), err)
	}
}
