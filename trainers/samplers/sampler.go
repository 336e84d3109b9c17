package samplers

import (
	"fmt"
	"math/rand"
	"sort"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/registry"
)

// Sampler produces the batches of one epoch.
type Sampler interface {
	Name() string
	// Batches returns iters batches of exactly batchSize indices into
	// labels (the training-set labels).
	Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error)
}

// EmbeddingSampler is a Sampler that needs the embeddings of the whole
// training set (rows aligned with labels). The trainer calls Refresh before
// every epoch's Batches call with the current model's embeddings.
type EmbeddingSampler interface {
	Sampler
	Refresh(emb mat32.Matrix) error
}

// Info describes a registered sampler for `dmlbench list samplers`.
type Info struct {
	Name    string
	Summary string
	New     func() Sampler
}

// reg holds the samplers by name, compared case-insensitively
// (internal/registry).
var reg = registry.NewFold[Info]("sampler")

// Register adds a sampler; it panics on a duplicate name (a programming error).
func Register(i Info) { reg.Register(i.Name, i) }

// New builds the named sampler.
func New(name string) (Sampler, error) {
	i, err := reg.Get(name)
	if err != nil {
		return nil, err
	}
	return i.New(), nil
}

// All lists the registered samplers sorted by name.
func All() []Info { return reg.Values() }

// Names lists the registered samplers' names, sorted.
func Names() []string { return reg.AvailableNames() }

func init() {
	Register(Info{Name: "random", Summary: "uniform batches: the training set shuffled each pass, cut into consecutive batches", New: func() Sampler { return Random{} }})
	for _, k := range []int{2, 4, 8} {
		Register(Info{
			Name:    fmt.Sprintf("spc-%d", k),
			Summary: fmt.Sprintf("B/%d random classes × %d random samples each (Roth et al. 2020 Tab. 7–9, SPC-%d)", k, k, k),
			New:     func() Sampler { return SPC{K: k} },
		})
	}
	Register(Info{Name: "spc-r", Summary: "random classes, each with a random number of samples in [2, 8] (Roth et al. 2020 Tab. 7–9, SPC-R)", New: func() Sampler { return SPC{Random: true, MinK: 2, MaxK: 8} }})
}

func checkArgs(labels []int32, batchSize, iters int) error {
	switch {
	case len(labels) == 0:
		return fmt.Errorf("samplers: empty training set")
	case batchSize <= 0:
		return fmt.Errorf("samplers: batch size %d must be positive", batchSize)
	case iters < 0:
		return fmt.Errorf("samplers: %d iterations per epoch", iters)
	}
	return nil
}

// Random draws batches from a stream of random permutations of the training
// set: each item appears once per pass, passes are reshuffled.
type Random struct{}

// Name implements Sampler.
func (Random) Name() string { return "random" }

// Batches implements Sampler.
func (Random) Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error) {
	if err := checkArgs(labels, batchSize, iters); err != nil {
		return nil, err
	}
	perm := rng.Perm(len(labels))
	pos := 0
	out := make([][]int, iters)
	for it := range out {
		b := make([]int, batchSize)
		for j := range b {
			if pos == len(perm) {
				perm, pos = rng.Perm(len(labels)), 0
			}
			b[j] = perm[pos]
			pos++
		}
		out[it] = b
	}
	return out, nil
}

// SPC builds class-balanced batches: classes are drawn from a stream of
// random permutations of the training classes (so a batch repeats a class
// only when it needs more classes than exist), and each drawn class
// contributes K samples (Random: a count uniform in [MinK, MaxK]) chosen
// uniformly without replacement (with replacement once a class is
// exhausted). The last class of a batch is cut short to fit batchSize.
type SPC struct {
	K          int
	Random     bool
	MinK, MaxK int
}

// Name implements Sampler.
func (s SPC) Name() string {
	if s.Random {
		return "spc-r"
	}
	return fmt.Sprintf("spc-%d", s.K)
}

// Batches implements Sampler.
func (s SPC) Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error) {
	if err := checkArgs(labels, batchSize, iters); err != nil {
		return nil, err
	}
	if (!s.Random && s.K <= 0) || (s.Random && (s.MinK <= 0 || s.MaxK < s.MinK)) {
		return nil, fmt.Errorf("samplers: invalid samples-per-class setting %+v", s)
	}
	byClass := map[int32][]int{}
	for i, l := range labels {
		byClass[l] = append(byClass[l], i)
	}
	classes := make([]int32, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(a, b int) bool { return classes[a] < classes[b] })

	order := rng.Perm(len(classes))
	pos := 0
	out := make([][]int, iters)
	for it := range out {
		b := make([]int, 0, batchSize)
		used := map[int]bool{}
		for len(b) < batchSize {
			if pos == len(order) {
				// New pass over the classes; those already in this batch go
				// last so a batch repeats a class only when it must.
				order, pos = rng.Perm(len(classes)), 0
				sort.SliceStable(order, func(a, b int) bool { return !used[order[a]] && used[order[b]] })
			}
			used[order[pos]] = true
			members := byClass[classes[order[pos]]]
			pos++
			k := s.K
			if s.Random {
				k = s.MinK + rng.Intn(s.MaxK-s.MinK+1)
			}
			k = min(k, batchSize-len(b))
			pick := rng.Perm(len(members))
			for j := 0; j < k; j++ {
				if j < len(pick) {
					b = append(b, members[pick[j]])
				} else {
					b = append(b, members[rng.Intn(len(members))])
				}
			}
		}
		out[it] = b
	}
	return out, nil
}
