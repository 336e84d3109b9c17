package losses

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/miners"
)

// moreLosses are the losses added from seed 000 §A.1, seed 002 and seed 004,
// with whether each works on unit embeddings (Info.Sphere).
var moreLosses = map[string]bool{
	"angular": false, "genlifted": false, "histogram": true, "quadruplet": true, "snr": true, "softtriple": true,
	"lifted": false, "proxytriplet": true, "prototypical": false, "rankedlist": true, "structclust": true,
	"recallk": true, "smoothap": true,
}

// TestRegistryMore: the added losses are registered with a one-line summary,
// at least one documented hyper-parameter, a valid default miner, the
// intended Sphere flag, and passing every documented default explicitly
// gives the same loss as passing none.
func TestRegistryMore(t *testing.T) {
	for name, sphere := range moreLosses {
		info, ok := registry[name]
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if info.Summary == "" || strings.Contains(info.Summary, "\n") || len(info.Hyper) == 0 {
			t.Errorf("%s: summary %q, %d hyper-parameters", name, info.Summary, len(info.Hyper))
		}
		if info.Sphere != sphere {
			t.Errorf("%s: Sphere = %v, want %v", name, info.Sphere, sphere)
		}
		if info.Miner != "" {
			if _, err := miners.New(info.Miner); err != nil {
				t.Errorf("%s: default miner: %v", name, err)
			}
		}
		b := randomBatch(9, 12, 6, 3)
		eval := func(h map[string]float64) float64 {
			l := newLoss(t, name, Config{NumClasses: 3, Dim: 6, Seed: 4, Hyper: h})
			b.Rng = rand.New(rand.NewSource(5))
			v, err := l.Forward(b, make([]float32, 72))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if v0, v1 := eval(nil), eval(info.Hyper); v0 != v1 {
			t.Errorf("%s: L = %v with defaults implicit, %v explicit", name, v0, v1)
		}
	}
}
