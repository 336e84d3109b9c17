package losses

import (
	"fmt"
	"math"
	"math/rand"
	"strings"

	"github.com/dmlbench/dmlbench/internal/registry"
	"github.com/dmlbench/dmlbench/trainers/param"
)

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
	Params() []*param.Param
}

// Config carries what a loss constructor may need.
type Config struct {
	NumClasses int                // training classes (proxy losses)
	Dim        int                // embedding dimension
	Miner      string             // miner name for tuple losses ("" = the loss's default)
	Hyper      map[string]float64 // overrides of the loss's hyper-parameters by name
	Seed       int64

	// declared holds the defaults of the loss being built (its Info.Hyper)
	// and records the names its constructor reads; Register sets it.
	declared *hyperReads
}

// hyperReads is what a constructor reads through Config.hyperParam.
type hyperReads struct {
	defaults   map[string]float64
	read       map[string]bool
	undeclared []string
}

// hyperParam returns the hyper-parameter name of the loss being built: the
// override c.Hyper[name] when given, else the default its Info.Hyper
// declares. A name Info.Hyper does not declare reads as NaN, and the
// registry turns the construction into an error.
func (c Config) hyperParam(name string) float64 {
	h := c.declared
	def, ok := h.defaults[name]
	if !ok {
		h.undeclared = append(h.undeclared, name)
		return math.NaN()
	}
	h.read[name] = true
	if v, ok := c.Hyper[name]; ok {
		return v
	}
	return def
}

// hyperGiven reports whether the hyper-parameter name is overridden.
func (c Config) hyperGiven(name string) bool {
	_, ok := c.Hyper[name]
	return ok
}

// Info describes a registered loss for `dmlbench list losses`.
type Info struct {
	Name string
	// Summary is one line: the formula and its source. Register replaces
	// each {{name}} by the default of hyper-parameter name, so a default is
	// written once, in Hyper.
	Summary string
	// Hyper lists every hyper-parameter the constructor reads, with its
	// default: the one place a default is written.
	Hyper map[string]float64
	// Miner is the default miner of a tuple loss ("" when the loss does not
	// take a miner: it mines internally or uses proxies).
	Miner string
	// Sphere reports that the loss L2-normalises the embeddings itself: the
	// model need not, and retrieval should use unit (cosine) embeddings.
	Sphere bool
	// Raw reports that the loss is defined on unnormalised embeddings
	// (Roth et al. 2020 §A.1: N-pair, (generalised) lifted structure and
	// prototypical losses regularise or exploit the embedding norm), so the
	// trainer's default is no L2 projection of the model output
	// (docs/losses.md shows what the projection costs these losses).
	Raw bool
	// Teacher reports that the loss trains from a teacher run (`dmlbench
	// run --teacher DIR`, Distiller) and fails without one.
	Teacher bool
	// New builds the loss; bad hyper-parameters are an error. Register
	// wraps the constructor given here so that it reads its defaults from
	// Hyper (Config.hyperParam).
	New func(Config) (Loss, error)

	build func(Config) (Loss, error) // the constructor as registered
}

// reg holds the losses by name (internal/registry: duplicate names
// panic, listings are sorted, unknown names list the known ones).
var reg = registry.New[Info]("loss")

// Register adds a loss; called from each loss file's init. A duplicate
// name, or a {{name}} in the summary that Hyper does not declare, panics.
func Register(i Info) {
	summary, err := expandDefaults(i.Summary, i.Hyper)
	if err != nil {
		panic(fmt.Sprintf("loss %s: summary: %v", i.Name, err))
	}
	i.Summary, i.build = summary, i.New
	i.New = func(c Config) (Loss, error) {
		l, _, err := construct(i, c)
		return l, err
	}
	reg.Register(i.Name, i)
}

// construct runs the registered constructor of i with its declared
// defaults and returns the loss and the hyper-parameter names it read.
func construct(i Info, c Config) (Loss, map[string]bool, error) {
	for k := range c.Hyper {
		if _, ok := i.Hyper[k]; !ok {
			return nil, nil, fmt.Errorf("loss %s has no hyper-parameter %q", i.Name, k)
		}
	}
	h := &hyperReads{defaults: i.Hyper, read: map[string]bool{}}
	c.declared = h
	l, err := i.build(c)
	if len(h.undeclared) > 0 {
		return nil, h.read, fmt.Errorf("loss %s reads hyper-parameters %q that its Info.Hyper does not declare", i.Name, h.undeclared)
	}
	return l, h.read, err
}

// expandDefaults replaces each {{name}} in summary by the default h[name]
// (formatDefault).
func expandDefaults(summary string, h map[string]float64) (string, error) {
	var out strings.Builder
	for {
		start := strings.Index(summary, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(summary[start:], "}}")
		if end < 0 {
			return "", fmt.Errorf("unclosed {{ in %q", summary)
		}
		name := summary[start+2 : start+end]
		v, ok := h[name]
		if !ok {
			return "", fmt.Errorf("{{%s}} is not a declared hyper-parameter", name)
		}
		out.WriteString(summary[:start])
		out.WriteString(formatDefault(v))
		summary = summary[start+end+2:]
	}
	out.WriteString(summary)
	return out.String(), nil
}

// formatDefault writes a default as `dmlbench list losses` shows it: %g,
// or π/k for a whole fraction of π (an angle in radians).
func formatDefault(v float64) string {
	for k := 1; k <= 12; k++ {
		if v == math.Pi/float64(k) {
			if k == 1 {
				return "π"
			}
			return fmt.Sprintf("π/%d", k)
		}
	}
	return fmt.Sprintf("%g", v)
}

// New builds the named loss.
func New(name string, c Config) (Loss, error) {
	i, err := reg.Get(name)
	if err != nil {
		return nil, err
	}
	return i.New(c)
}

// Lookup returns the registration of the named loss.
func Lookup(name string) (Info, bool) { return reg.Lookup(name) }

// All lists registered losses sorted by name.
func All() []Info { return reg.Values() }

// Names lists the registered losses' names, sorted.
func Names() []string { return reg.AvailableNames() }
