package model

import (
	"fmt"
	"math"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/dmlbench/dmlbench/trainers/losses"
)

func init() {
	register(Info{
		Name:    "mlp",
		Summary: "MLP head: [Linear → (LayerNorm) → ReLU]×len(hidden) → Linear(embed_dim) → (L2 norm)",
		New:     func(c Config) (Model, error) { return NewMLP(c) },
	})
}

// layerNormEps is ε in LayerNorm y = (z−μ)/√(σ²+ε)·γ + β (Ba et al. 2016).
const layerNormEps = 1e-5

// l2Eps is ε in the L2 normalisation e = z/√(Σz²+ε).
const l2Eps = 1e-12

// MLP is a multilayer perceptron embedding head:
//
//	h₀ = x,  hₗ = ReLU(Norm(hₗ₋₁Wₗ + bₗ)) for each hidden width,
//	z = h_L W_out + b_out,  E = z/‖z‖₂ if L2Normalize else z,
//
// Norm is the identity or LayerNorm (per row: (z−μ)/√(σ²+ε)·γ+β).
// Weights use He-uniform initialisation U(±√(6/fan_in)) for ReLU layers and
// U(±1/√fan_in) for the output layer (PyTorch's nn.Linear default); biases,
// β = 0 and γ = 1. All draws come from rand.New(rand.NewSource(Seed)).
type MLP struct {
	cfg    Config
	g      *G.ExprGraph
	params []*losses.Param
	nodes  []*G.Node

	xbuf, gbuf []float32
	eVal       G.Value
	gradVals   []G.Value
	fwd, full  G.VM
}

// NewMLP builds and compiles the MLP for c (defaults filled).
func NewMLP(c Config) (*MLP, error) {
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := &MLP{cfg: c, g: G.NewGraph()}
	rng := rand.New(rand.NewSource(c.Seed))
	if err := m.build(rng); err != nil {
		return nil, fmt.Errorf("model: build MLP: %w", err)
	}
	return m, nil
}

func (m *MLP) newParam(name string, shape []int, noDecay bool) (*losses.Param, *G.Node) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	p := &losses.Param{Name: name, Shape: append([]int(nil), shape...), Data: make([]float32, n), Grad: make([]float32, n), NoDecay: noDecay}
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(p.Data))
	node := G.NewMatrix(m.g, tensor.Float32, G.WithShape(shape...), G.WithName(name), G.WithValue(t))
	m.params = append(m.params, p)
	m.nodes = append(m.nodes, node)
	return p, node
}

func uniformFill(rng *rand.Rand, v []float32, bound float64) {
	for i := range v {
		v[i] = float32((2*rng.Float64() - 1) * bound)
	}
}

func (m *MLP) build(rng *rand.Rand) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia: %v", r)
		}
	}()
	c := m.cfg
	B := c.Chunk
	m.xbuf = make([]float32, B*c.InDim)
	m.gbuf = make([]float32, B*c.EmbedDim)
	x := G.NewMatrix(m.g, tensor.Float32, G.WithShape(B, c.InDim), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(B, c.InDim), tensor.WithBacking(m.xbuf))))
	gin := G.NewMatrix(m.g, tensor.Float32, G.WithShape(B, c.EmbedDim), G.WithName("dL_dE"),
		G.WithValue(tensor.New(tensor.WithShape(B, c.EmbedDim), tensor.WithBacking(m.gbuf))))

	h := x
	in := c.InDim
	for l, width := range c.Hidden {
		wp, w := m.newParam(fmt.Sprintf("mlp.%d.weight", l), []int{in, width}, false)
		uniformFill(rng, wp.Data, math.Sqrt(6/float64(in)))
		_, b := m.newParam(fmt.Sprintf("mlp.%d.bias", l), []int{1, width}, true)
		z, err := linear(h, w, b)
		if err != nil {
			return err
		}
		if c.Norm == "layer" {
			gp, gamma := m.newParam(fmt.Sprintf("mlp.%d.ln_gamma", l), []int{1, width}, true)
			for i := range gp.Data {
				gp.Data[i] = 1
			}
			_, beta := m.newParam(fmt.Sprintf("mlp.%d.ln_beta", l), []int{1, width}, true)
			if z, err = layerNorm(z, gamma, beta, B); err != nil {
				return err
			}
		}
		if h, err = G.Rectify(z); err != nil {
			return err
		}
		in = width
	}
	wp, w := m.newParam("out.weight", []int{in, c.EmbedDim}, false)
	uniformFill(rng, wp.Data, 1/math.Sqrt(float64(in)))
	bp, b := m.newParam("out.bias", []int{1, c.EmbedDim}, true)
	uniformFill(rng, bp.Data, 1/math.Sqrt(float64(in)))
	e, err := linear(h, w, b)
	if err != nil {
		return err
	}
	if c.L2Normalize {
		if e, err = l2Normalize(e, B); err != nil {
			return err
		}
	}
	// Surrogate S = Σ E ⊙ G (package comment).
	prod, err := G.HadamardProd(e, gin)
	if err != nil {
		return err
	}
	s, err := G.Sum(prod)
	if err != nil {
		return err
	}
	grads, err := G.Grad(s, m.nodes...)
	if err != nil {
		return err
	}
	eRead := G.Read(e, &m.eVal)
	m.gradVals = make([]G.Value, len(grads))
	for i, gn := range grads {
		G.Read(gn, &m.gradVals[i])
	}
	fwdProg, fwdLoc, err := G.CompileFunction(m.g, append(G.Nodes{x}, m.nodes...), G.Nodes{eRead})
	if err != nil {
		return fmt.Errorf("compile forward: %w", err)
	}
	m.fwd = G.NewTapeMachine(m.g, G.WithPrecompiled(fwdProg, fwdLoc))
	m.full = G.NewTapeMachine(m.g)
	return nil
}

// linear is hW + b with b (1×out) broadcast along rows.
func linear(h, w, b *G.Node) (*G.Node, error) {
	hw, err := G.Mul(h, w)
	if err != nil {
		return nil, err
	}
	return G.BroadcastAdd(hw, b, nil, []byte{0})
}

// layerNorm normalises each row of z (B×H): (z−μ)/√(σ²+ε)·γ + β.
func layerNorm(z, gamma, beta *G.Node, B int) (*G.Node, error) {
	mu, err := G.Mean(z, 1)
	if err != nil {
		return nil, err
	}
	if mu, err = G.Reshape(mu, tensor.Shape{B, 1}); err != nil {
		return nil, err
	}
	zc, err := G.BroadcastSub(z, mu, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(zc)
	if err != nil {
		return nil, err
	}
	v, err := G.Mean(sq, 1)
	if err != nil {
		return nil, err
	}
	if v, err = G.Add(v, G.NewConstant(float32(layerNormEps))); err != nil {
		return nil, err
	}
	sd, err := G.Sqrt(v)
	if err != nil {
		return nil, err
	}
	if sd, err = G.Reshape(sd, tensor.Shape{B, 1}); err != nil {
		return nil, err
	}
	zn, err := G.BroadcastHadamardDiv(zc, sd, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	if zn, err = G.BroadcastHadamardProd(zn, gamma, nil, []byte{0}); err != nil {
		return nil, err
	}
	return G.BroadcastAdd(zn, beta, nil, []byte{0})
}

// l2Normalize divides each row of e (B×D) by √(Σe²+ε).
func l2Normalize(e *G.Node, B int) (*G.Node, error) {
	sq, err := G.Square(e)
	if err != nil {
		return nil, err
	}
	ss, err := G.Sum(sq, 1)
	if err != nil {
		return nil, err
	}
	if ss, err = G.Add(ss, G.NewConstant(float32(l2Eps))); err != nil {
		return nil, err
	}
	n, err := G.Sqrt(ss)
	if err != nil {
		return nil, err
	}
	if n, err = G.Reshape(n, tensor.Shape{B, 1}); err != nil {
		return nil, err
	}
	return G.BroadcastHadamardDiv(e, n, nil, []byte{1})
}

// Name implements Model.
func (m *MLP) Name() string { return "mlp" }

// InDim implements Model.
func (m *MLP) InDim() int { return m.cfg.InDim }

// OutDim implements Model.
func (m *MLP) OutDim() int { return m.cfg.EmbedDim }

// Chunk implements Model.
func (m *MLP) Chunk() int { return m.cfg.Chunk }

// Config returns the configuration with defaults filled.
func (m *MLP) Config() Config { return m.cfg }

// Params implements Model.
func (m *MLP) Params() []*losses.Param { return m.params }

func (m *MLP) load(x []float32, g []float32, rows int) error {
	c := m.cfg
	if rows < 0 || rows > c.Chunk {
		return fmt.Errorf("model: %d rows outside [0, chunk %d]", rows, c.Chunk)
	}
	if len(x) < rows*c.InDim {
		return fmt.Errorf("model: input has %d values, need %d×%d", len(x), rows, c.InDim)
	}
	n := copy(m.xbuf, x[:rows*c.InDim])
	clear(m.xbuf[n:])
	if g != nil {
		if len(g) < rows*c.EmbedDim {
			return fmt.Errorf("model: gradient has %d values, need %d×%d", len(g), rows, c.EmbedDim)
		}
		n := copy(m.gbuf, g[:rows*c.EmbedDim])
		clear(m.gbuf[n:])
	}
	return nil
}

func run(vm G.VM) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("model: gorgonia panicked: %v", r)
		}
	}()
	vm.Reset()
	if err := vm.RunAll(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

func valueData(v G.Value) ([]float32, error) {
	if v == nil {
		return nil, fmt.Errorf("model: program produced no value")
	}
	d, ok := v.Data().([]float32)
	if !ok {
		return nil, fmt.Errorf("model: program produced %T, want []float32", v.Data())
	}
	return d, nil
}

// Forward implements Model.
func (m *MLP) Forward(x []float32, rows int, out []float32) error {
	if len(out) < rows*m.cfg.EmbedDim {
		return fmt.Errorf("model: output has %d values, need %d×%d", len(out), rows, m.cfg.EmbedDim)
	}
	if err := m.load(x, nil, rows); err != nil {
		return err
	}
	if err := run(m.fwd); err != nil {
		return err
	}
	e, err := valueData(m.eVal)
	if err != nil {
		return err
	}
	copy(out[:rows*m.cfg.EmbedDim], e)
	return nil
}

// Backward implements Model.
func (m *MLP) Backward(x, g []float32, rows int) error {
	if g == nil {
		return fmt.Errorf("model: Backward needs dL/dE")
	}
	if err := m.load(x, g, rows); err != nil {
		return err
	}
	if err := run(m.full); err != nil {
		return err
	}
	for i, p := range m.params {
		d, err := valueData(m.gradVals[i])
		if err != nil {
			return err
		}
		if len(d) != len(p.Grad) {
			return fmt.Errorf("model: gradient of %s has %d values, want %d", p.Name, len(d), len(p.Grad))
		}
		for j, v := range d {
			p.Grad[j] += v
		}
	}
	return nil
}

// Close implements Model.
func (m *MLP) Close() error {
	if m.fwd != nil {
		m.fwd.Close()
	}
	if m.full != nil {
		m.full.Close()
	}
	return nil
}
