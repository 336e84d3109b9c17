package losses

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
)

// mpnCE trains the backbone through the intra-batch message-passing network
// of Seidenschwarz et al. 2021 (ICML, main paper §3 and its supplementary):
// the unit batch embeddings x_i exchange messages over the
// fully connected batch graph (mpn.go), a linear classifier over the C
// training classes scores the refined features h_i, and the loss is
// label-smoothed cross-entropy at temperature T,
//
//	L = CE_ε(W_c h / T) + λ·CE_ε(W_b x / T),
//	CE_ε(z) = 1/B Σ_i [ log Σ_c exp z_ic − Σ_c t_ic z_ic ],  t_i = (1−ε)·onehot(y_i) + ε/C,
//
// where the second term is the cross-entropy on the backbone embeddings that
// the reference code adds ("lsce" next to "lsgnn", both weighted 1), because
// retrieval uses the backbone alone. The defaults of T (temperature) and of
// the MPN shape (steps, heads, ffn, dropout) are the reference CUB
// configuration; that of ε (smoothing) is the usual label-smoothing value,
// and λ is backbone_weight.
// dL/dE flows back through the MPN to the backbone, so the backbone is
// trained "through" the MPN as in the paper. The classifiers have no bias and
// start at N(0, 0.001²) (the reference's classifier init); they are trained
// at the base learning rate with the rest of the MPN.
//
// The trained MPN also refines test batches (Refiner; Seidenschwarz et al. 2021 §3).
type mpnCE struct {
	base
	refiner
	net                      *mpnNet
	C, D                     int
	temp, smooth, backWeight float64
	teach                    map[int]*inference // Teach graphs by batch size
}

func init() {
	Register(Info{
		Name:    "mpn-ce",
		Summary: "label-smoothed CE after a multi-head attention message-passing net over the batch + CE on the backbone (Seidenschwarz et al. 2021)",
		Hyper: map[string]float64{"steps": 1, "heads": 2, "ffn": 4, "dropout": 0.1,
			"temperature": 0.2, "smoothing": 0.1, "backbone_weight": 1},
		Sphere: true,
		New:    newMPNCE,
	})
}

func newMPNCE(c Config) (Loss, error) {
	if err := noMiner("mpn-ce", c); err != nil {
		return nil, err
	}
	if c.NumClasses < 2 || c.Dim < 1 {
		return nil, fmt.Errorf("loss mpn-ce needs Config.NumClasses ≥ 2 and Config.Dim ≥ 1 (got %d, %d)", c.NumClasses, c.Dim)
	}
	spec, err := mpnSpecOf(c)
	if err != nil {
		return nil, err
	}
	l := &mpnCE{C: c.NumClasses, D: c.Dim, temp: c.hyperParam("temperature"),
		smooth: c.hyperParam("smoothing"), backWeight: c.hyperParam("backbone_weight")}
	if err := positive(map[string]float64{"temperature": l.temp}); err != nil {
		return nil, err
	}
	if l.smooth < 0 || l.smooth >= 1 || math.IsNaN(l.smooth) {
		return nil, fmt.Errorf("hyper-parameter smoothing must be in [0, 1), got %v", l.smooth)
	}
	if l.backWeight < 0 || math.IsNaN(l.backWeight) || math.IsInf(l.backWeight, 0) {
		return nil, fmt.Errorf("hyper-parameter backbone_weight must be ≥ 0, got %v", l.backWeight)
	}
	rng := rand.New(rand.NewSource(c.Seed))
	l.net = newMPN("mpn", spec, rng)
	l.refiner.m = l.net
	params := append([]*param.Param(nil), l.net.params...)
	cls := func(name string) *param.Param {
		p := &param.Param{Name: name, Shape: []int{l.C, l.D}, Data: make([]float32, l.C*l.D), Grad: make([]float32, l.C*l.D)}
		for i := range p.Data {
			p.Data[i] = float32(0.001 * rng.NormFloat64())
		}
		return p
	}
	params = append(params, cls("mpn.cls.W"))
	if l.backWeight > 0 {
		params = append(params, cls("mpn.backbone.W"))
	}
	l.base = base{name: "mpn-ce", r: runner{params: params, graph: l.graph}}
	return l, nil
}

// mpnSpecOf reads the MPN shape hyper-parameters (steps, heads, ffn,
// dropout) of c.
func mpnSpecOf(c Config) (mpnSpec, error) {
	steps, err := intHyper(c, "steps", 1)
	if err != nil {
		return mpnSpec{}, err
	}
	heads, err := intHyper(c, "heads", 1)
	if err != nil {
		return mpnSpec{}, err
	}
	ffn, err := intHyper(c, "ffn", 1)
	if err != nil {
		return mpnSpec{}, err
	}
	drop := c.hyperParam("dropout")
	if drop < 0 || drop >= 1 || math.IsNaN(drop) {
		return mpnSpec{}, fmt.Errorf("hyper-parameter dropout must be in [0, 1), got %v", drop)
	}
	return mpnSpec{D: c.Dim, Heads: heads, Steps: steps, Hidden: ffn * c.Dim, Drop: drop}, nil
}

// smoothedCE is 1/B Σ_i [lse(z_i) − Σ_c t_ic z_ic] for logits z and soft
// targets t whose rows sum to 1.
func (b *builder) smoothedCE(z, t *G.Node) *G.Node {
	return mulS(total(sub(b.lse(z, nil, false), pick(z, t))), 1/float64(b.B))
}

func (l *mpnCE) graph(b *builder) *G.Node {
	n := len(l.net.params)
	x := b.unitE()
	h := l.net.forward(b, x, b.P[:n], true)
	T := b.input("T", b.B, l.C)
	cost := b.smoothedCE(mulS(matmulT(h, b.P[n]), 1/l.temp), T)
	if l.backWeight > 0 {
		cost = add(cost, mulS(b.smoothedCE(mulS(matmulT(x, b.P[n+1]), 1/l.temp), T), l.backWeight))
	}
	return cost
}

// Forward implements Loss.
func (l *mpnCE) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, l.C, l.net.spec.Drop > 0); err != nil {
		return 0, fmt.Errorf("mpn-ce: %w", err)
	}
	if bt.D != l.D {
		return 0, fmt.Errorf("mpn-ce: batch dimension %d differs from the MPN's %d (Config.Dim)", bt.D, l.D)
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("mpn-ce: %w", err)
	}
	T := n.in("T")
	off := l.smooth / float64(l.C)
	for i := range T {
		T[i] = off
	}
	for i, y := range bt.Labels {
		T[i*l.C+y] += 1 - l.smooth
	}
	if l.net.spec.Drop > 0 {
		fillDropout(n, l.net.spec.Drop, bt.Rng)
	}
	return l.r.run(n, bt, grad)
}

// Teacher is a trained loss that labels a batch for distillation (Seidenschwarz et al. 2021
// §3.4): mpn-ce refines the batch with its MPN and classifies it.
type Teacher interface {
	Loss
	// NumClasses is the number of training classes of the classifier.
	NumClasses() int
	// Teach writes the unit MPN features (B×D) and the classifier logits
	// (B×NumClasses) of the B×D teacher-backbone embeddings emb.
	Teach(emb []float32, B, D int, feats, logits []float32) error
}

// NumClasses implements Teacher.
func (l *mpnCE) NumClasses() int { return l.C }

// Teach implements Teacher (no dropout; logits at the training temperature).
func (l *mpnCE) Teach(emb []float32, B, D int, feats, logits []float32) error {
	if D != l.D || len(emb) != B*D || len(feats) != B*D || len(logits) != B*l.C {
		return fmt.Errorf("mpn-ce teacher: batch %d×%d (%d values, %d feature and %d logit slots) does not fit D = %d, C = %d",
			B, D, len(emb), len(feats), len(logits), l.D, l.C)
	}
	inf, ok := l.teach[B]
	if !ok {
		var err error
		if inf, err = l.net.compileInference(B, l.r.params[len(l.net.params)], l.temp); err != nil {
			return err
		}
		if l.teach == nil {
			l.teach = map[int]*inference{}
		}
		l.teach[B] = inf
	}
	return inf.run(l.r.params, emb, feats, logits)
}
