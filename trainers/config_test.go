package trainers

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/knn"
)

// A misspelt --config key is one line naming its line and the key (and
// flag) it probably means.
func TestLoadConfigFileUnknownKey(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"dataset: omniglot\nloss: margin\nlearning_rate: 0.01\n", `line 3: unknown key "learning_rate"; did you mean lr (--lr)?`},
		{"loss: margin\nbatch_size: 64\n", `line 2: unknown key "batch_size"; did you mean batch-size (--batch-size)?`},
		{"loss: margin\ncompat: roth\n", `line 2: unknown key "compat"; did you mean convention (--compat)?`},
		{"loss: margin\nembed_dim: 64\n", `line 2: unknown key "embed_dim"; did you mean embed-dim (--embed-dim)?`},
		{"loss: margin\nmomentum: 0.9\n", `line 2: unknown key "momentum" (the keys are the flag names`},
		{"loss: margin\ndas: true\ndas-params: {T: 2, Kk: 3}\n", `line 3: das-params: unknown key "Kk"; did you mean K?`},
		{"loss: margin\nbatch-size: abc\n", "line 2: cannot unmarshal !!str `abc` into int"},
		{"- a\n- b\n", "line 1: want a mapping of keys"},
	} {
		p := filepath.Join(t.TempDir(), "run.yaml")
		if err := os.WriteFile(p, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadConfigFile(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line with %q", c.file, err, c.want)
		}
	}
}

// Resolve keeps an explicit zero number and refuses it where it is
// invalid, gives an empty name its default, derives the dependent settings
// and validates once: a resolved config passes through unchanged.
func TestResolve(t *testing.T) {
	c := Defaults()
	c.Loss, c.LR = "margin", 0
	var ce *ConfigError
	if _, err := c.Resolve(); !errors.As(err, &ce) || !strings.Contains(err.Error(), "lr = 0") {
		t.Fatalf("lr 0: %v", err)
	}
	c = Defaults()
	c.Loss, c.Sampler, c.Arch, c.DAS = "npair", "", "cnn", true
	r, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.Sampler != "spc-2" || r.EmbedNorm != "none" || len(r.Channels) == 0 || r.DASParams == nil || !r.resolved {
		t.Fatalf("resolved %+v", r)
	}
	r.LR = -1 // read-only by contract: Resolve does not check a resolved config again
	if again, err := r.Resolve(); err != nil || again.LR != -1 {
		t.Fatalf("a resolved config was checked again: %v", err)
	}
	if got, err := (Config{Loss: "margin"}).ready(); err != nil || got.LR != Defaults().LR || !got.resolved {
		t.Fatalf("a partial literal: %+v, %v", got, err)
	}
}

// TestResolveNames: Resolve refuses a name no registry holds with the
// nearest one, wrapping suggest.ErrUnknown; a known backend that is not
// compiled in is left to the run.
func TestResolveNames(t *testing.T) {
	for _, c := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Loss = "margni" }, `config: unknown loss "margni"; did you mean "margin"?`},
		{func(c *Config) { c.Miner = "distanc" }, `config: unknown miner "distanc"; did you mean "distance"?`},
		{func(c *Config) { c.Sampler = "spc2" }, `config: unknown sampler "spc2"; did you mean "spc-2"?`},
		{func(c *Config) { c.Convention = "stric" }, `config: convention "stric": want strict, roth, pml or pml3; did you mean strict?`},
		{func(c *Config) { c.Distance = "cosin" }, `config: unknown distance "cosin"; did you mean "cosine"?`},
		{func(c *Config) { c.Backend = "exct" }, `config: unknown k-NN backend "exct"; did you mean "exact"?`},
		{func(c *Config) { c.SelectBy = "R@l" }, `config: unknown metric "R@l"; did you mean "R@1"?`},
		{func(c *Config) { c.Metrics = []string{"R@1", "MAP@RR"} }, `config: unknown metric "MAP@RR"; did you mean "MAP@R"?`},
		{func(c *Config) { c.Dataset = "omniglott" }, `config: unknown dataset "omniglott"; did you mean "omniglot"?`},
		{func(c *Config) { c.Arch = "mlpp" }, `config: unknown architecture "mlpp"; did you mean "mlp"?`},
		{func(c *Config) { c.TestTime = "knnn" }, `config: unknown test-time mode "knnn"; did you mean "knn"?`},
	} {
		cfg := Defaults()
		cfg.Loss = "margin"
		c.set(&cfg)
		_, err := cfg.Resolve()
		if err == nil || err.Error() != c.want || !errors.Is(err, suggest.ErrUnknown) {
			t.Errorf("Resolve: %v; want %s wrapping suggest.ErrUnknown", err, c.want)
		}
	}
	cfg := Defaults()
	cfg.Loss, cfg.Sampler, cfg.Distance, cfg.SelectBy, cfg.Backend = "margin", "SPC-4", "cos", "MAP@R", knn.FaissName
	if _, err := cfg.Resolve(); err != nil {
		t.Errorf("known names (sampler in any case, a distance alias, faiss): %v", err)
	}
}
