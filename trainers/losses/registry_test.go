package losses

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/miners"
)

// TestRegistry: the eight core losses are registered with a one-line summary, and
// passing every documented default explicitly gives the same loss as
// passing none (so Hyper lists exactly what the constructors read).
func TestRegistry(t *testing.T) {
	want := []string{"arcface", "contrastive", "margin", "multisimilarity", "normsoftmax", "npair", "proxynca", "triplet"}
	for _, name := range want {
		info, ok := registry[name]
		if !ok {
			t.Fatalf("core loss %q is not registered", name)
		}
		if info.Summary == "" || strings.Contains(info.Summary, "\n") || len(info.Hyper) == 0 {
			t.Errorf("%s: summary %q, %d hyper-parameters", info.Name, info.Summary, len(info.Hyper))
		}
		if info.Miner != "" {
			if _, err := miners.New(info.Miner); err != nil {
				t.Errorf("%s: default miner: %v", info.Name, err)
			}
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
}

// TestParamLearningRates pins the seed 000 §A.1 learning rates of the loss
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
