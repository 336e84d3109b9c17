// Package miners selects informative tuples from a batch on float values
// (outside the autodiff graph); losses turn the result into masks/indices.
package miners

import (
	"math/rand"

	"github.com/dmlbench/dmlbench/internal/registry"
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

// reg holds the miners by name (internal/registry).
var reg = registry.New[Info]("miner")

// Register adds a miner; called from each miner file's init. A duplicate
// name panics.
func Register(i Info) { reg.Register(i.Name, i) }

// New builds the named miner.
func New(name string) (Miner, error) {
	i, err := reg.Get(name)
	if err != nil {
		return nil, err
	}
	return i.New(), nil
}

// All lists registered miners sorted by name.
func All() []Info { return reg.Values() }

// Names lists the registered miners' names, sorted.
func Names() []string { return reg.AvailableNames() }
