package model

import (
	"fmt"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/trainers/param"

	"github.com/dmlbench/dmlbench/internal/registry"
)

// Model is an embedding network with a two-pass training interface (see the
// package comment).
type Model interface {
	// Name is the architecture name ("mlp").
	Name() string
	// InDim and OutDim are the input and embedding widths.
	InDim() int
	OutDim() int
	// Chunk is the most rows one pass handles.
	Chunk() int
	// Params are the learnable tensors; Data backs the graph's values.
	Params() []*param.Param
	// Forward writes f(x) for rows ≤ Chunk() input rows (x: rows×InDim)
	// into out (rows×OutDim).
	Forward(x []float32, rows int, out []float32) error
	// Backward re-forwards rows ≤ Chunk() input rows and ADDS
	// ∂(Σ f(x)⊙g)/∂θ to every Param.Grad (g: rows×OutDim, typically dL/dE).
	Backward(x, g []float32, rows int) error
	// BackwardKept is Backward for the input of the latest Forward call,
	// whose activations the model kept (rows must be that call's), so
	// that a batch of one chunk is forwarded once per step. The
	// parameters must not have changed since that Forward.
	BackwardKept(g []float32, rows int) error
	// Close releases the model's resources.
	Close() error
}

// Config describes a model. Zero fields take the defaults of Defaults.
type Config struct {
	Arch        string `json:"arch" yaml:"arch"`                 // "mlp" (default) or "cnn"
	InDim       int    `json:"in-dim" yaml:"in-dim"`             // input width (set from the data)
	Hidden      []int  `json:"hidden" yaml:"hidden"`             // hidden widths; empty = a linear head
	EmbedDim    int    `json:"embed-dim" yaml:"embed-dim"`       // output width (default 128)
	Norm        string `json:"norm" yaml:"norm"`                 // "none" or "layer" (LayerNorm after each hidden linear map)
	L2Normalize bool   `json:"l2-normalize" yaml:"l2-normalize"` // project embeddings onto the unit sphere
	Chunk       int    `json:"chunk" yaml:"chunk"`               // most rows per pass (default 128)
	Seed        int64  `json:"seed" yaml:"seed"`                 // weight-initialisation seed

	// Image geometry of the input rows, channels-first (C×H×W = InDim; set
	// from the data set's Shape; zero for flat features). Needed by "cnn".
	InChannels int `json:"in-channels,omitempty" yaml:"in-channels"`
	InHeight   int `json:"in-height,omitempty" yaml:"in-height"`
	InWidth    int `json:"in-width,omitempty" yaml:"in-width"`
	// Channels are the cnn's conv widths, one block each (default 32,64).
	Channels []int `json:"channels,omitempty" yaml:"channels"`
}

// DefaultEmbedDim is the embedding width of Roth et al. 2020 (D = 128).
const DefaultEmbedDim = 128

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.Arch == "" {
		c.Arch = "mlp"
	}
	if c.EmbedDim == 0 {
		c.EmbedDim = DefaultEmbedDim
	}
	if c.Norm == "" {
		c.Norm = "none"
	}
	if c.Chunk == 0 {
		c.Chunk = 128
	}
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.InDim <= 0:
		return fmt.Errorf("model: input width %d must be positive", c.InDim)
	case c.EmbedDim <= 0:
		return fmt.Errorf("model: embedding width %d must be positive", c.EmbedDim)
	case c.Chunk <= 0:
		return fmt.Errorf("model: chunk %d must be positive", c.Chunk)
	case c.Norm != "none" && c.Norm != "layer":
		return fmt.Errorf("model: unknown normalisation %q (have: none, layer)", c.Norm)
	}
	for i, h := range c.Hidden {
		if h <= 0 {
			return fmt.Errorf("model: hidden width #%d = %d must be positive", i+1, h)
		}
	}
	for i, ch := range c.Channels {
		if ch <= 0 {
			return fmt.Errorf("model: conv channels #%d = %d must be positive", i+1, ch)
		}
	}
	return nil
}

// Info describes a registered architecture.
type Info struct {
	Name    string
	Summary string
	New     func(Config) (Model, error)
	// Check, if set, validates architecture-specific fields (e.g. the
	// input geometry of the CNN) without building the model.
	Check func(Config) error
}

// reg holds the architectures by name (internal/registry).
var reg = registry.New[Info]("architecture")

func register(i Info) { reg.Register(i.Name, i) }

// New builds the architecture c.Arch.
func New(c Config) (Model, error) {
	c = c.WithDefaults()
	if err := Check(c); err != nil {
		return nil, err
	}
	if err := checkBLAS(); err != nil {
		return nil, err
	}
	i, _ := reg.Lookup(c.Arch)
	return i.New(c)
}

// Check reports whether New(c) would accept c (known architecture, valid
// fields), without building anything.
func Check(c Config) error {
	c = c.WithDefaults()
	i, err := reg.Get(c.Arch)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if i.Check != nil {
		return i.Check(c)
	}
	return nil
}

// Summary is the one-line description of a registered architecture ("" if
// unknown).
func Summary(name string) string {
	i, _ := reg.Lookup(name)
	return i.Summary
}

// Names lists the registered architectures.
func Names() []string { return reg.Names() }

// Embed computes f(x) for every row of x, Chunk() rows at a time.
func Embed(m Model, x mat32.Matrix) (mat32.Matrix, error) {
	if x.Cols != m.InDim() {
		return mat32.Matrix{}, fmt.Errorf("model: input has %d columns, model expects %d", x.Cols, m.InDim())
	}
	if len(x.Data) != x.Rows*x.Cols {
		return mat32.Matrix{}, fmt.Errorf("model: input data length %d does not match %d×%d", len(x.Data), x.Rows, x.Cols)
	}
	d := m.OutDim()
	out := mat32.Matrix{Rows: x.Rows, Cols: d, Data: make([]float32, x.Rows*d)}
	c := m.Chunk()
	for s := 0; s < x.Rows; s += c {
		n := min(c, x.Rows-s)
		if err := m.Forward(x.Data[s*x.Cols:(s+n)*x.Cols], n, out.Data[s*d:(s+n)*d]); err != nil {
			return mat32.Matrix{}, err
		}
	}
	return out, nil
}
