package losses

import (
	"fmt"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The maths of a loss is a Gorgonia expression graph in float64 (exact
// enough for finite-difference gradient checks at 1e-6; the B×D inputs are
// small, so the cost over float32 is negligible next to the model). E (B×D)
// is an input leaf; label masks and mined indices are input tensors whose
// backing slices are overwritten each step; learnable Params are leaves whose
// float64 copies are refreshed from Param.Data each step. One graph and its
// TapeMachine are compiled per shape (B, D, tuple capacity) and reused.
// Multi-similarity, the default loss, is written out with its gradient
// instead (multisimilarity.go): the graph's allocations and bookkeeping
// cost more than its arithmetic at training batch sizes.

// shape keys a compiled graph. V is the number of virtual rows appended to
// the ranking grid by SiMix (recallk, smoothap; 0 otherwise).
type shape struct{ B, D, T, V int }

// net is one compiled graph: its machine and the backing slices of its inputs.
type net struct {
	vm      G.VM
	emb     []float64            // backing of E
	f64     map[string][]float64 // backing of float inputs, by name
	ints    map[string][]int     // backing of index inputs, by name
	params  [][]float64          // backing of each Param leaf
	cost    G.Value              // the summed (or mean) loss
	grads   []G.Value            // dL/dE, then dL/dParam_i
	nonzero []G.Value            // term vectors of a mean over non-zero terms
}

// in returns the backing slice of the named float input.
func (n *net) in(name string) []float64 { return n.f64[name] }

// idx returns the backing slice of the named index input.
func (n *net) idx(name string) []int { return n.ints[name] }

// builder is handed to a loss's graph function; its methods wrap Gorgonia
// operations and panic with a buildError on failure, which compile recovers.
type builder struct {
	g       *G.ExprGraph
	n       *net
	B, D, T int
	V       int       // SiMix virtual rows (see simix.go)
	E       *G.Node   // B×D embeddings
	P       []*G.Node // one leaf per Param, in Params() order
	unit    *G.Node   // rows of E scaled to unit length (built on first use)
	nonzero []*G.Node
}

type buildError struct{ err error }

// must unwraps a Gorgonia result, panicking with a buildError on failure.
func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(buildError{err})
	}
	return n
}

// input declares a float input of the given shape (matrix or vector).
func (b *builder) input(name string, shp ...int) *G.Node {
	size := 1
	for _, s := range shp {
		size *= s
	}
	back := make([]float64, size)
	b.n.f64[name] = back
	t := tensor.New(tensor.WithShape(shp...), tensor.WithBacking(back))
	return G.NewTensor(b.g, tensor.Float64, len(shp), G.WithShape(shp...), G.WithName(name), G.WithValue(t))
}

// index declares an index vector input of length n (for gather).
func (b *builder) index(name string, n int) *G.Node {
	back := make([]int, n)
	b.n.ints[name] = back
	t := tensor.New(tensor.WithShape(n), tensor.WithBacking(back))
	return G.NewVector(b.g, tensor.Int, G.WithShape(n), G.WithName(name), G.WithValue(t))
}

// meanNonZero makes the loss the sum of the cost divided by the number of
// strictly positive entries of terms (the "average over non-zero terms"
// reducer of Wu et al. 2017 / pytorch-metric-learning). The cost returned by
// the graph function must then be the plain sum of these terms.
func (b *builder) meanNonZero(terms ...*G.Node) { b.nonzero = append(b.nonzero, terms...) }

// base is embedded by every loss: its name and its graphs.
type base struct {
	name string
	r    runner
}

// Name implements Loss.
func (b *base) Name() string { return b.name }

// Params implements Loss.
func (b *base) Params() []*param.Param { return b.r.params }

// runner owns the compiled graphs of one loss.
type runner struct {
	params []*param.Param
	graph  func(b *builder) *G.Node // returns the scalar cost
	nets   map[shape]*net
}

// get returns the compiled graph for s, building it on first use.
func (r *runner) get(s shape) (*net, error) {
	if n, ok := r.nets[s]; ok {
		return n, nil
	}
	n, err := r.compile(s)
	if err != nil {
		return nil, err
	}
	if r.nets == nil {
		r.nets = map[shape]*net{}
	}
	r.nets[s] = n
	return n, nil
}

// compile builds the graph, its gradients and read-outs, and a TapeMachine.
func (r *runner) compile(s shape) (n *net, err error) {
	defer func() {
		if p := recover(); p != nil {
			be, ok := p.(buildError)
			if !ok {
				panic(p)
			}
			n, err = nil, fmt.Errorf("losses: building graph for B=%d D=%d T=%d: %w", s.B, s.D, s.T, be.err)
		}
	}()
	g := G.NewGraph()
	n = &net{f64: map[string][]float64{}, ints: map[string][]int{}}
	b := &builder{g: g, n: n, B: s.B, D: s.D, T: s.T, V: s.V}
	n.emb = make([]float64, s.B*s.D)
	b.E = G.NewMatrix(g, tensor.Float64, G.WithShape(s.B, s.D), G.WithName("E"),
		G.WithValue(tensor.New(tensor.WithShape(s.B, s.D), tensor.WithBacking(n.emb))))
	for _, p := range r.params {
		back := make([]float64, len(p.Data))
		n.params = append(n.params, back)
		t := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(back))
		b.P = append(b.P, G.NewTensor(g, tensor.Float64, len(p.Shape), G.WithShape(p.Shape...), G.WithName(p.Name), G.WithValue(t)))
	}
	cost := r.graph(b)
	if !cost.IsScalar() {
		return nil, fmt.Errorf("losses: cost has shape %v, want a scalar", cost.Shape())
	}
	wrt := append([]*G.Node{b.E}, b.P...)
	grads, err := G.Grad(cost, wrt...)
	if err != nil {
		return nil, fmt.Errorf("losses: symbolic gradient: %w", err)
	}
	G.Read(cost, &n.cost)
	n.grads = make([]G.Value, len(grads))
	for i, gr := range grads {
		G.Read(gr, &n.grads[i])
	}
	n.nonzero = make([]G.Value, len(b.nonzero))
	for i, t := range b.nonzero {
		G.Read(t, &n.nonzero[i])
	}
	n.vm = G.NewTapeMachine(g)
	return n, nil
}

// run executes n on the batch (inputs other than E and the Params must
// already be filled), writes dL/dE into grad and dL/dθ into each Param.Grad,
// and returns L.
func (r *runner) run(n *net, bt Batch, grad []float32) (float64, error) {
	for i, v := range bt.Emb {
		n.emb[i] = float64(v)
	}
	for i, p := range r.params {
		for j, v := range p.Data {
			n.params[i][j] = float64(v)
		}
	}
	defer n.vm.Reset()
	if err := n.vm.RunAll(); err != nil {
		return 0, fmt.Errorf("losses: running graph: %w", err)
	}
	loss := n.cost.Data().(float64)
	scale := 1.0
	if len(n.nonzero) > 0 {
		count := 0
		for _, v := range n.nonzero {
			for _, x := range v.Data().([]float64) {
				if x > 0 {
					count++
				}
			}
		}
		if count > 0 {
			scale = 1 / float64(count)
		}
	}
	loss *= scale
	toF32(grad, n.grads[0], scale)
	for i, p := range r.params {
		toF32(p.Grad, n.grads[i+1], scale)
	}
	return loss, nil
}

// runAnchorMean runs n with the anchor weights w (1 for each of the anchors
// kept, 0 elsewhere) divided by anchors, so that L is a mean over them; with
// no anchor the loss is 0 and grad is cleared.
func (r *runner) runAnchorMean(n *net, bt Batch, grad []float32, w []float64, anchors int) (float64, error) {
	if anchors == 0 {
		zeroGrads(grad, nil)
		return 0, nil
	}
	for i := range w {
		w[i] /= float64(anchors)
	}
	return r.run(n, bt, grad)
}

// toF32 writes scale·v into dst.
func toF32(dst []float32, v G.Value, scale float64) {
	for i, x := range v.Data().([]float64) {
		dst[i] = float32(scale * x)
	}
}

// zeroGrads clears grad and every Param's Grad (a batch without tuples).
func zeroGrads(grad []float32, params []*param.Param) {
	clear(grad)
	for _, p := range params {
		clear(p.Grad)
	}
}
