// Package miners selects informative tuples from a batch on float values
// (outside the autodiff graph); losses turn the result into masks/indices.
package miners

import (
	"fmt"
	"math/rand"
	"sort"
)

// Triplets are (anchor, positive, negative) batch indices, equal lengths.
type Triplets struct{ A, P, N []int32 }

// Len is the number of triplets.
func (t Triplets) Len() int { return len(t.A) }

// Miner picks triplets from a batch given its pairwise Euclidean distances
// (B×B row-major, not squared) and labels.
type Miner interface {
	Name() string
	Mine(dist []float32, labels []int, rng *rand.Rand) Triplets
}

// Info describes a registered miner for `dmlbench list miners`.
type Info struct {
	Name    string
	Summary string
	New     func() Miner
}

var registry = map[string]Info{}

// Register adds a miner; called from each miner file's init.
func Register(i Info) { registry[i.Name] = i }

// New builds the named miner.
func New(name string) (Miner, error) {
	i, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown miner %q (see `dmlbench list miners`)", name)
	}
	return i.New(), nil
}

// All lists registered miners sorted by name.
func All() []Info {
	out := make([]Info, 0, len(registry))
	for _, i := range registry {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
