package losses

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The message-passing network (MPN) of Seidenschwarz et al., "Learning
// Intra-Batch Connections for Deep Metric Learning" (ICML 2021; Seidenschwarz et al. 2021 is
// its supplementary, the MPN itself is §3 of the main paper and the
// reference code dvl-tum/intra_batch, net/gnn_base.py and attentions.py).
// The mini-batch is a fully connected graph (self-loops included) whose
// nodes are the B embeddings. With x_i the unit backbone embedding:
//
//	h⁰_i = W_in x_i + b_in                                 (input FC, "dim_red" with red = 1)
//	for every step l and head k (d_k = ⌈D/H⌉):
//	  q_i = W_q^k h_i + b_q^k,  k_j = W_k^k h_j,  v_j = W_v^k h_j + b_v^k
//	  α_ij^k = softmax_j( q_iᵀ k_j / √d_k )                (dot-product attention over all j)
//	  m_i = Σ_k W_o^k Σ_j α_ij^k v_j + b_o                 (heads concatenated, output FC)
//	  h_i ← LN(h_i + drop(m_i))                             (residual + layer norm)
//	  h_i ← LN(h_i + drop(W_2 drop(ReLU(W_1 h_i + b_1)) + b_2))  (FC block, width 4D)
//
// Defaults are the paper's best CUB-200-2011 setting (main paper §4.3 / Fig. 5
// and the reference config_cub_train.yaml): one message-passing step, two
// attention heads, dropout 0.1; Seidenschwarz et al. 2021 §7 adds that more steps and heads
// hurt on SOP. Cars196 prefers two steps and eight heads (config_cars_train).
// Unlike the reference code, the concatenated-head output FC is stored as one
// d_k×D block per head (Σ_k O^k W_o^k equals concat(O)·W_o), so D need not be
// a multiple of H, and the classifier's BatchNorm "neck" is left out.

// mpnSpec is the shape of an MPN.
type mpnSpec struct {
	D, Heads, Steps, Hidden int
	Drop                    float64 // dropout probability (training only)
}

// headDim is d_k = ⌈D/H⌉.
func (s mpnSpec) headDim() int { return (s.D + s.Heads - 1) / s.Heads }

// mpnNet owns the MPN parameters, in the order forward consumes them.
type mpnNet struct {
	spec   mpnSpec
	params []*param.Param
}

// newMPN creates the parameters with the reference code's initialisation:
// Xavier-uniform attention projections with zero biases, PyTorch's default
// U(±1/√fan_in) for the input and FC-block layers, LN γ = 1, β = 0.
func newMPN(prefix string, s mpnSpec, rng *rand.Rand) *mpnNet {
	m := &mpnNet{spec: s}
	D, H, dk := s.D, s.Hidden, s.headDim()
	uni := func(bound float64) func() float32 {
		return func() float32 { return float32((2*rng.Float64() - 1) * bound) }
	}
	zero := func() float32 { return 0 }
	one := func() float32 { return 1 }
	mk := func(name string, shape []int, noDecay bool, init func() float32) {
		n := 1
		for _, v := range shape {
			n *= v
		}
		p := &param.Param{Name: prefix + "." + name, Shape: shape, Data: make([]float32, n), Grad: make([]float32, n), NoDecay: noDecay}
		for i := range p.Data {
			p.Data[i] = init()
		}
		m.params = append(m.params, p)
	}
	fan := func(n int) float64 { return 1 / math.Sqrt(float64(n)) }
	xav := math.Sqrt(6 / float64(2*D)) // Xavier bound of the reference's D×D projections
	mk("in.W", []int{D, D}, false, uni(fan(D)))
	mk("in.b", []int{D}, true, uni(fan(D)))
	for l := 0; l < s.Steps; l++ {
		st := fmt.Sprintf("s%d.", l)
		for k := 0; k < s.Heads; k++ {
			hd := fmt.Sprintf("%sh%d.", st, k)
			// No key bias: q_iᵀb_k is the same for every j, so softmax_j
			// cancels it and its gradient is exactly 0 (the reference's
			// k_linear bias never leaves its zero init).
			for _, w := range []string{"q", "k", "v"} {
				mk(hd+"W"+w, []int{D, dk}, false, uni(xav))
				if w != "k" {
					mk(hd+"b"+w, []int{dk}, true, zero)
				}
			}
			mk(hd+"Wo", []int{dk, D}, false, uni(xav))
		}
		mk(st+"bo", []int{D}, true, zero)
		mk(st+"ln1.g", []int{D}, true, one)
		mk(st+"ln1.b", []int{D}, true, zero)
		mk(st+"W1", []int{D, H}, false, uni(fan(D)))
		mk(st+"b1", []int{H}, true, uni(fan(D)))
		mk(st+"W2", []int{H, D}, false, uni(fan(H)))
		mk(st+"b2", []int{D}, true, uni(fan(H)))
		mk(st+"ln2.g", []int{D}, true, one)
		mk(st+"ln2.b", []int{D}, true, zero)
	}
	return m
}

// dropPrefix names the dropout-mask inputs of a graph.
const dropPrefix = "drop."

// forward builds h^L for the B×D node features x from the parameter leaves P
// (m.params order). With train set and Drop > 0, every dropout site is an
// input mask (fillDropout), as in the reference: attention weights, the
// message, the FC block's hidden layer and its output.
func (m *mpnNet) forward(b *builder, x *G.Node, P []*G.Node, train bool) *G.Node {
	B := x.Shape()[0]
	i := 0
	next := func() *G.Node { i++; return P[i-1] }
	lin := func(x, W, bias *G.Node) *G.Node { return add(must(G.Mul(x, W)), b.rowsOf(bias, B)) }
	drop := func(x *G.Node, site string) *G.Node {
		if !train || m.spec.Drop == 0 {
			return x
		}
		return mul(x, b.input(dropPrefix+site, x.Shape()...))
	}
	scale := 1 / math.Sqrt(float64(m.spec.headDim()))
	h := lin(x, next(), next())
	for l := 0; l < m.spec.Steps; l++ {
		var msg *G.Node
		for k := 0; k < m.spec.Heads; k++ {
			Wq, bq, Wk, Wv, bv, Wo := next(), next(), next(), next(), next(), next()
			q, key, v := lin(h, Wq, bq), must(G.Mul(h, Wk)), lin(h, Wv, bv)
			s := mulS(matmulT(q, key), scale)
			a := exp(colSub(s, b.lse(s, nil, false))) // row softmax over all nodes j
			a = drop(a, fmt.Sprintf("s%d.att%d", l, k))
			o := must(G.Mul(must(G.Mul(a, v)), Wo))
			if msg == nil {
				msg = o
			} else {
				msg = add(msg, o)
			}
		}
		msg = add(msg, b.rowsOf(next(), B))
		h = b.layerNorm(add(h, drop(msg, fmt.Sprintf("s%d.msg", l))), next(), next())
		W1, b1, W2, b2 := next(), next(), next(), next()
		f := lin(drop(relu(lin(h, W1, b1)), fmt.Sprintf("s%d.mlp", l)), W2, b2)
		h = b.layerNorm(add(h, drop(f, fmt.Sprintf("s%d.out", l))), next(), next())
	}
	if i != len(m.params) {
		panic(buildError{fmt.Errorf("mpn: consumed %d of %d parameters", i, len(m.params))})
	}
	return h
}

// lnEps is the layer-norm ε (PyTorch's default).
const lnEps = 1e-5

// layerNorm normalises every row of x (N×D) to zero mean and unit variance
// and applies the per-feature gain g and bias beta (D):
// γ ⊙ (x_i − μ_i)/√(σ_i² + ε) + β.
func (b *builder) layerNorm(x, g, beta *G.Node) *G.Node {
	N, D := x.Shape()[0], x.Shape()[1]
	xc := colSub(x, mulS(rowSum(x), 1/float64(D)))
	sd := sqrt(addS(mulS(rowSum(sq(xc)), 1/float64(D)), lnEps))
	return add(mul(colDiv(xc, sd), b.rowsOf(g, N)), b.rowsOf(beta, N))
}

// fillDropout writes fresh inverted-dropout masks (0 with probability p,
// 1/(1−p) otherwise) into every dropout input of n, in name order so that a
// given rng state always gives the same masks.
func fillDropout(n *net, p float64, rng *rand.Rand) {
	var names []string
	for k := range n.f64 {
		if strings.HasPrefix(k, dropPrefix) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	keep := 1 / (1 - p)
	for _, k := range names {
		for i := range n.f64[k] {
			if rng.Float64() < p {
				n.f64[k][i] = 0
			} else {
				n.f64[k][i] = keep
			}
		}
	}
}

// inference is a compiled forward-only graph: unit embeddings → MPN →
// unit refined features (and, with a classifier, its logits), without
// dropout.
type inference struct {
	vm          G.VM
	emb         []float64
	params      [][]float64
	out, logits G.Value
}

// compileInference builds the test-time graph of m for batches of B rows;
// with cls (C×D) it also outputs the logits h·clsᵀ/temp.
func (m *mpnNet) compileInference(B int, cls *param.Param, temp float64) (inf *inference, err error) {
	defer func() {
		if p := recover(); p != nil {
			be, ok := p.(buildError)
			if !ok {
				panic(p)
			}
			inf, err = nil, fmt.Errorf("mpn: building inference graph for B=%d: %w", B, be.err)
		}
	}()
	D := m.spec.D
	g := G.NewGraph()
	n := &net{f64: map[string][]float64{}, ints: map[string][]int{}}
	b := &builder{g: g, n: n, B: B, D: D}
	inf = &inference{emb: make([]float64, B*D)}
	b.E = G.NewMatrix(g, tensor.Float64, G.WithShape(B, D), G.WithName("E"),
		G.WithValue(tensor.New(tensor.WithShape(B, D), tensor.WithBacking(inf.emb))))
	params := m.params
	if cls != nil {
		params = append(append([]*param.Param(nil), params...), cls)
	}
	for _, p := range params {
		back := make([]float64, len(p.Data))
		inf.params = append(inf.params, back)
		t := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(back))
		b.P = append(b.P, G.NewTensor(g, tensor.Float64, len(p.Shape), G.WithShape(p.Shape...), G.WithName(p.Name), G.WithValue(t)))
	}
	h := m.forward(b, b.unitE(), b.P[:len(m.params)], false)
	G.Read(normalize(h), &inf.out)
	if cls != nil {
		G.Read(mulS(matmulT(h, b.P[len(m.params)]), 1/temp), &inf.logits)
	}
	inf.vm = G.NewTapeMachine(g)
	return inf, nil
}

// run refines the B×D batch emb into out (unit rows) and, for a graph with
// a classifier, writes its logits into logits.
func (inf *inference) run(params []*param.Param, emb, out, logits []float32) error {
	for i, v := range emb {
		inf.emb[i] = float64(v)
	}
	for k := range inf.params {
		for j, v := range params[k].Data {
			inf.params[k][j] = float64(v)
		}
	}
	defer inf.vm.Reset()
	if err := inf.vm.RunAll(); err != nil {
		return fmt.Errorf("mpn: running inference graph: %w", err)
	}
	for i, v := range inf.out.Data().([]float64) {
		out[i] = float32(v)
	}
	if logits != nil {
		for i, v := range inf.logits.Data().([]float64) {
			logits[i] = float32(v)
		}
	}
	return nil
}

// Refiner is implemented by losses whose learned parameters can refine a
// batch of embeddings at test time (Seidenschwarz et al. 2021 §3: feeding a constructed batch
// through the trained MPN).
type Refiner interface {
	// RefineDim is the dimension of the refined features.
	RefineDim() int
	// Refine writes the refined, unit-length features of the B×D batch emb
	// (row-major) into out (B×RefineDim()). Each row depends on the whole
	// batch.
	Refine(emb []float32, B, D int, out []float32) error
}

// refiner caches inference graphs per batch size.
type refiner struct {
	m    *mpnNet
	nets map[int]*inference
}

func (r *refiner) RefineDim() int { return r.m.spec.D }

func (r *refiner) Refine(emb []float32, B, D int, out []float32) error {
	if D != r.m.spec.D {
		return fmt.Errorf("mpn: batch dimension %d differs from the MPN's %d", D, r.m.spec.D)
	}
	if B < 1 || len(emb) != B*D || len(out) != B*D {
		return fmt.Errorf("mpn: refine needs B ≥ 1 and B·D = %d values in and out (got %d, %d)", B*D, len(emb), len(out))
	}
	inf, ok := r.nets[B]
	if !ok {
		var err error
		if inf, err = r.m.compileInference(B, nil, 1); err != nil {
			return err
		}
		if r.nets == nil {
			r.nets = map[int]*inference{}
		}
		r.nets[B] = inf
	}
	return inf.run(r.m.params, emb, out, nil)
}
