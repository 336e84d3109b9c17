// Package losses implements the deep-metric-learning losses of the seed
// papers, one file per loss, behind one interface and a registry.
//
// A Loss sees only the batch embeddings (B×D, float32, row-major) and their
// labels. It returns the loss value and dL/dE; the trainer back-propagates
// dL/dE through the model (so losses are tested in isolation with finite
// differences, and the same code serves multistage back-propagation, Patel et al. 2024
// Alg. 1). Learnable loss parameters (proxies, the margin β, class centres)
// are owned by the loss and exposed as Params for the trainer's optimiser.
package losses

import (
	"fmt"
	"math/rand"

	"github.com/dmlbench/dmlbench/internal/registry"
)

// Param is a learnable tensor owned by a loss (or a model). Data and Grad
// have equal length; Forward overwrites Grad.
type Param struct {
	Name    string
	Shape   []int
	Data    []float32
	Grad    []float32
	LRScale float64 // learning-rate multiplier relative to the base rate; 0 means 1
	// LR, if > 0, is an absolute learning rate that overrides the base rate
	// (Roth et al. 2020 §A.1: proxy lr, β lr 5e-4).
	LR float64
	// NoDecay excludes the parameter from weight decay.
	NoDecay bool
}

// Batch is one training batch as seen by a loss.
type Batch struct {
	Emb    []float32 // B×D row-major
	Labels []int     // B class ids in [0, NumClasses)
	B, D   int
	Rng    *rand.Rand // for stochastic mining; seeded by the trainer
}

// Loss is a differentiable objective over batch embeddings.
type Loss interface {
	Name() string
	// Forward returns the loss for the batch and writes dL/dE into grad
	// (len B·D). It also fills the Grad of every Param.
	Forward(b Batch, grad []float32) (float64, error)
	// Params lists the learnable parameters (nil when none).
	Params() []*Param
}

// Config carries what a loss constructor may need.
type Config struct {
	NumClasses int                // training classes (proxy losses)
	Dim        int                // embedding dimension
	Miner      string             // miner name for tuple losses ("" = the loss's default)
	Hyper      map[string]float64 // overrides of the loss's hyper-parameters by name
	Seed       int64
}

// Info describes a registered loss for `dmlbench list losses`.
type Info struct {
	Name    string
	Summary string             // one line: formula and paper reference
	Hyper   map[string]float64 // defaults
	// Miner is the default miner of a tuple loss ("" when the loss does not
	// take a miner: it mines internally or uses proxies).
	Miner string
	// Sphere reports that the loss L2-normalises the embeddings itself: the
	// model need not, and retrieval should use unit (cosine) embeddings.
	Sphere bool
	// Raw reports that the loss is defined on unnormalised embeddings
	// (Roth et al. 2020 §A.1: N-pair, (generalised) lifted structure and
	// prototypical losses regularise or exploit the embedding norm), so the
	// trainer's default is no L2 projection of the model output.
	Raw bool
	// Teacher reports that the loss trains from a teacher run (`dmlbench
	// run --teacher DIR`, Distiller) and fails without one.
	Teacher bool
	New     func(Config) (Loss, error)
}

// reg holds the losses by name (internal/registry: duplicate names
// panic, listings are sorted, unknown names list the known ones).
var reg = registry.New[Info]("loss")

// Register adds a loss; called from each loss file's init. A duplicate
// name panics.
func Register(i Info) { reg.Register(i.Name, i) }

// New builds the named loss.
func New(name string, c Config) (Loss, error) {
	i, err := reg.Get(name)
	if err != nil {
		return nil, err
	}
	hyper := make(map[string]float64, len(i.Hyper))
	for k, v := range i.Hyper {
		hyper[k] = v
	}
	for k, v := range c.Hyper {
		if _, ok := i.Hyper[k]; !ok {
			return nil, fmt.Errorf("loss %s has no hyper-parameter %q", name, k)
		}
		hyper[k] = v
	}
	c.Hyper = hyper // the defaults of Info.Hyper, overridden by the caller's
	return i.New(c)
}

// Lookup returns the registration of the named loss.
func Lookup(name string) (Info, bool) { return reg.Lookup(name) }

// All lists registered losses sorted by name.
func All() []Info { return reg.Values() }
