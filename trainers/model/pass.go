package model

import (
	"fmt"
	"math"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/dmlbench/dmlbench/trainers/losses"
)

// pass is the two-pass machinery of the package comment that every
// architecture shares: the graph, the parameters and their nodes, the x and
// dL/dE input tensors (backed by xbuf and gbuf, Chunk rows each), the
// forward-only and full compiled programs, and the Model methods that run
// them. An architecture embeds a pass made by newPass and, in its build
// step, calls input for x, adds its layers with newParam, and hands its last
// features to output (the output layer, L2 and compile).
type pass struct {
	cfg    Config
	g      *G.ExprGraph
	params []*losses.Param
	nodes  []*G.Node

	x, gin     *G.Node
	xbuf, gbuf []float32
	eVal       G.Value
	gradVals   []G.Value
	fwd, full  G.VM
}

// newPass starts an empty graph for the (defaulted) config c.
func newPass(c Config) pass { return pass{cfg: c, g: G.NewGraph()} }

// input creates the Chunk×InDim input x and the Chunk×EmbedDim dL/dE
// tensor (in that order, before any parameter) and returns x.
func (p *pass) input() *G.Node {
	c := p.cfg
	B := c.Chunk
	p.xbuf = make([]float32, B*c.InDim)
	p.gbuf = make([]float32, B*c.EmbedDim)
	p.x = G.NewMatrix(p.g, tensor.Float32, G.WithShape(B, c.InDim), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(B, c.InDim), tensor.WithBacking(p.xbuf))))
	p.gin = G.NewMatrix(p.g, tensor.Float32, G.WithShape(B, c.EmbedDim), G.WithName("dL_dE"),
		G.WithValue(tensor.New(tensor.WithShape(B, c.EmbedDim), tensor.WithBacking(p.gbuf))))
	return p.x
}

// newParam adds a zero matrix parameter whose Data backs its graph node.
func (p *pass) newParam(name string, shape []int, noDecay bool) (*losses.Param, *G.Node) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	q := &losses.Param{Name: name, Shape: append([]int(nil), shape...), Data: make([]float32, n), Grad: make([]float32, n), NoDecay: noDecay}
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(q.Data))
	node := G.NewMatrix(p.g, tensor.Float32, G.WithShape(shape...), G.WithName(name), G.WithValue(t))
	p.params = append(p.params, q)
	p.nodes = append(p.nodes, node)
	return q, node
}

// uniformFill draws v from U(±bound) with rng, in order.
func uniformFill(rng *rand.Rand, v []float32, bound float64) {
	for i := range v {
		v[i] = float32((2*rng.Float64() - 1) * bound)
	}
}

// output ends the graph on the features h (Chunk×in): the output layer
// z = h W_out + b_out (weight, then bias, drawn from U(±1/√in) with rng),
// E = z/‖z‖₂ if L2Normalize, then compile(E).
func (p *pass) output(h *G.Node, in int, rng *rand.Rand) error {
	c := p.cfg
	wp, w := p.newParam("out.weight", []int{in, c.EmbedDim}, false)
	uniformFill(rng, wp.Data, 1/math.Sqrt(float64(in)))
	bp, b := p.newParam("out.bias", []int{1, c.EmbedDim}, true)
	uniformFill(rng, bp.Data, 1/math.Sqrt(float64(in)))
	e, err := linear(h, w, b)
	if err != nil {
		return err
	}
	if c.L2Normalize {
		if e, err = l2Normalize(e, c.Chunk); err != nil {
			return err
		}
	}
	return p.compile(e)
}

// compile differentiates the surrogate S = Σ E ⊙ G (package comment) of the
// embedding e with respect to every parameter and compiles the forward-only
// program (x and the parameters → e) and the full one.
func (p *pass) compile(e *G.Node) error {
	prod, err := G.HadamardProd(e, p.gin)
	if err != nil {
		return err
	}
	s, err := G.Sum(prod)
	if err != nil {
		return err
	}
	grads, err := G.Grad(s, p.nodes...)
	if err != nil {
		return err
	}
	eRead := G.Read(e, &p.eVal)
	p.gradVals = make([]G.Value, len(grads))
	for i, gn := range grads {
		G.Read(gn, &p.gradVals[i])
	}
	fwdProg, fwdLoc, err := G.CompileFunction(p.g, append(G.Nodes{p.x}, p.nodes...), G.Nodes{eRead})
	if err != nil {
		return fmt.Errorf("compile forward: %w", err)
	}
	p.fwd = G.NewTapeMachine(p.g, G.WithPrecompiled(fwdProg, fwdLoc))
	p.full = G.NewTapeMachine(p.g)
	return nil
}

// InDim implements Model.
func (p *pass) InDim() int { return p.cfg.InDim }

// OutDim implements Model.
func (p *pass) OutDim() int { return p.cfg.EmbedDim }

// Chunk implements Model.
func (p *pass) Chunk() int { return p.cfg.Chunk }

// Params implements Model.
func (p *pass) Params() []*losses.Param { return p.params }

// load copies rows input rows (and, if g is not nil, rows of dL/dE) into the
// input tensors, zero-padding them to Chunk rows.
func (p *pass) load(x []float32, g []float32, rows int) error {
	c := p.cfg
	if rows < 0 || rows > c.Chunk {
		return fmt.Errorf("model: %d rows outside [0, chunk %d]", rows, c.Chunk)
	}
	if len(x) < rows*c.InDim {
		return fmt.Errorf("model: input has %d values, need %d×%d", len(x), rows, c.InDim)
	}
	n := copy(p.xbuf, x[:rows*c.InDim])
	clear(p.xbuf[n:])
	if g != nil {
		if len(g) < rows*c.EmbedDim {
			return fmt.Errorf("model: gradient has %d values, need %d×%d", len(g), rows, c.EmbedDim)
		}
		n := copy(p.gbuf, g[:rows*c.EmbedDim])
		clear(p.gbuf[n:])
	}
	return nil
}

func run(vm G.VM) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("model: gorgonia panicked: %v", r)
		}
	}()
	if !keepRegisters || !rewind(vm) {
		vm.Reset()
	}
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
func (p *pass) Forward(x []float32, rows int, out []float32) error {
	if len(out) < rows*p.cfg.EmbedDim {
		return fmt.Errorf("model: output has %d values, need %d×%d", len(out), rows, p.cfg.EmbedDim)
	}
	if err := p.load(x, nil, rows); err != nil {
		return err
	}
	if err := run(p.fwd); err != nil {
		return err
	}
	e, err := valueData(p.eVal)
	if err != nil {
		return err
	}
	copy(out[:rows*p.cfg.EmbedDim], e)
	return nil
}

// Backward implements Model.
func (p *pass) Backward(x, g []float32, rows int) error {
	if g == nil {
		return fmt.Errorf("model: Backward needs dL/dE")
	}
	if err := p.load(x, g, rows); err != nil {
		return err
	}
	if err := run(p.full); err != nil {
		return err
	}
	for i, q := range p.params {
		d, err := valueData(p.gradVals[i])
		if err != nil {
			return err
		}
		if len(d) != len(q.Grad) {
			return fmt.Errorf("model: gradient of %s has %d values, want %d", q.Name, len(d), len(q.Grad))
		}
		for j, v := range d {
			q.Grad[j] += v
		}
	}
	return nil
}

// Close implements Model.
func (p *pass) Close() error {
	if p.fwd != nil {
		p.fwd.Close()
	}
	if p.full != nil {
		p.full.Close()
	}
	return nil
}
