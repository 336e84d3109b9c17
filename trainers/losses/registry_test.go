package losses

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/miners"
)

// TestRegistry: every registered loss has a one-line summary, a valid
// default miner and the Sphere flag its test file expects; for every loss that trains
// without a teacher, at least one documented hyper-parameter, and passing
// every documented default explicitly gives the same loss as passing none
// (so Hyper lists exactly what the constructors read).
func TestRegistry(t *testing.T) {
	all := All()
	if len(all) < 20 {
		t.Fatalf("only %d losses registered", len(all))
	}
	for _, info := range all {
		if info.Summary == "" || strings.Contains(info.Summary, "\n") {
			t.Errorf("%s: summary %q", info.Name, info.Summary)
		}
		if want := casesOf[info.Name].sphere; info.Sphere != want {
			t.Errorf("%s: Sphere = %v, want %v", info.Name, info.Sphere, want)
		}
		if info.Miner != "" {
			if _, err := miners.New(info.Miner); err != nil {
				t.Errorf("%s: default miner: %v", info.Name, err)
			}
		}
		if casesOf[info.Name].ownTests {
			continue // built around a backbone or a teacher: see mpn_test.go
		}
		if len(info.Hyper) == 0 {
			t.Errorf("%s: no documented hyper-parameter", info.Name)
		}
		b := randomBatch(9, 12, 6, 3)
		eval := func(h map[string]float64) float64 {
			l := newLoss(t, info.Name, Config{NumClasses: 3, Dim: 6, Seed: 4, Hyper: h})
			b.Rng = rand.New(rand.NewSource(5))
			v, err := l.Forward(b, make([]float32, 72))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if v0, v1 := eval(nil), eval(info.Hyper); v0 != v1 {
			t.Errorf("%s: L = %v with defaults implicit, %v explicit", info.Name, v0, v1)
		}
	}
	if _, err := New("nope", Config{}); err == nil || !strings.Contains(err.Error(), `unknown loss "nope"; have: angular, arcface,`) {
		t.Errorf("unknown loss error: %v", err)
	}
}

// TestParamLearningRates pins the Roth et al. 2020 §A.1 learning rates of the loss
// parameters.
func TestParamLearningRates(t *testing.T) {
	cases := []struct {
		name        string
		lr, lrScale float64
		data0       float32
	}{
		{"margin", 5e-4, 0, 1.2},
		{"arcface", 5e-4, 0, 0},
		{"normsoftmax", 1e-5, 0, 0},
		{"proxynca", 0, 50, 0},
	}
	for _, c := range cases {
		l := newLoss(t, c.name, Config{NumClasses: 5, Dim: 4})
		p := l.Params()
		if len(p) != 1 || p[0].LR != c.lr || p[0].LRScale != c.lrScale || !p[0].NoDecay {
			t.Errorf("%s: params %+v", c.name, p)
			continue
		}
		if c.data0 != 0 && p[0].Data[0] != c.data0 {
			t.Errorf("%s: initial value %v, want %v", c.name, p[0].Data[0], c.data0)
		}
		if len(p[0].Data) != len(p[0].Grad) {
			t.Errorf("%s: Data/Grad lengths differ", c.name)
		}
	}
	for _, name := range []string{"contrastive", "triplet", "multisimilarity", "npair"} {
		if p := newLoss(t, name, Config{}).Params(); len(p) != 0 {
			t.Errorf("%s has %d params, want none", name, len(p))
		}
	}
}

// TestHyperParamsDeclared: every loss's constructor reads exactly the
// hyper-parameters its Info.Hyper declares (no undeclared read, no unused
// default), and the summary names no hyper-parameter it does not declare.
func TestHyperParamsDeclared(t *testing.T) {
	for _, info := range All() {
		_, read, err := construct(info, Config{NumClasses: 4, Dim: 6, Seed: 1})
		if err != nil {
			t.Errorf("%s: %v", info.Name, err)
			continue
		}
		for k := range info.Hyper {
			if !read[k] {
				t.Errorf("%s: Info.Hyper declares %q, the constructor never reads it", info.Name, k)
			}
		}
		for k := range read {
			if _, ok := info.Hyper[k]; !ok {
				t.Errorf("%s: the constructor reads %q, Info.Hyper does not declare it", info.Name, k)
			}
		}
		if strings.Contains(info.Summary, "{{") {
			t.Errorf("%s: unexpanded summary %q", info.Name, info.Summary)
		}
	}
	// An undeclared read is an error, not a silent NaN.
	bad := Info{Name: "undeclared", Hyper: map[string]float64{"a": 1}, build: func(c Config) (Loss, error) {
		_ = c.hyperParam("b")
		return nil, nil
	}}
	if _, _, err := construct(bad, Config{}); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("undeclared read: error %v", err)
	}
}

// TestExpandDefaults: {{name}} becomes the declared default (π fractions
// as such); an undeclared or unclosed placeholder is an error.
func TestExpandDefaults(t *testing.T) {
	h := map[string]float64{"margin": 0.2, "lr": 5e-4, "alpha": math.Pi / 4}
	got, err := expandDefaults("γ = {{margin}}, lr {{lr}}, α = {{alpha}}, e^{x}", h)
	if want := "γ = 0.2, lr 0.0005, α = π/4, e^{x}"; err != nil || got != want {
		t.Errorf("expandDefaults = %q, %v; want %q", got, err, want)
	}
	for _, s := range []string{"γ = {{gamma}}", "γ = {{margin"} {
		if _, err := expandDefaults(s, h); err == nil {
			t.Errorf("expandDefaults(%q): no error", s)
		}
	}
}
