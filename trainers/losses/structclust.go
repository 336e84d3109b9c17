package losses

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
)

// structClust is the structured clustering loss of Song et al. (2017,
// "Deep metric learning via facility location"), Fehérvári et al. 2019 §2.7 eqs. 10–12,
// on unit embeddings with Euclidean distances d. The facility-location score
// of medoids S ⊂ 𝓑 is F(X, S) = −Σ_i min_{j∈S} d_ij; the oracle score picks
// the best medoid inside each of the |𝒴| classes of the batch,
// F̃(X, y) = Σ_k max_{j: y_j=k} F(X_{y=k}, {j}) (eq. 10); and
//
//	L = [ max_{|S|=|𝒴|} { F(X, S) + γ Δ(g(S), y) } − F̃(X, y) ]₊               (eq. 11)
//
// with g(S) the nearest-medoid assignment (eq. 12), the structured margin
// Δ = 1 − NMI(g(S), y) (NMI normalised by √(H(g)H(y))) and γ = 1. The
// loss-augmented maximisation is NP-hard; as Song et al. (and Fehérvári et al. 2019's
// released code) it is approximated by greedy medoid selection followed by
// pam_iters = 5 rounds of PAM-style refinement that re-pick each cluster's
// medoid among its members. This inference runs in Go on the float values
// (O(|𝒴|·B²) NMI evaluations per step); the graph then differentiates
// Σ_i d(i, g_S(i)) and Σ_i d(i, oracle medoid of y_i) with S and the medoids
// held fixed (the loss is piecewise smooth in the embeddings).
//
// Fehérvári et al. (2019) find this method slow, very unstable and sensitive to the batch
// composition (too many classes per batch destabilise it); that holds here:
// the gradient only moves points towards/away from a few medoids, it is zero
// whenever the oracle clustering wins by the margin, and the greedy inference
// is the cost of the step.
type structClust struct {
	base
	gamma float64
	pam   int
}

func init() {
	Register(Info{
		Name:    "structclust",
		Summary: "[max_S F(X,S) + γ(1 − NMI(g(S),y)) − F̃(X,y)]₊, facility location, greedy + PAM inference, γ = 1 (Song 2017; Fehérvári et al. 2019 eqs. 10–12) — slow and unstable, as Fehérvári et al. 2019 reports",
		Hyper:   map[string]float64{"margin_mult": 1, "pam_iters": 5},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &structClust{base: base{name: "structclust"}, gamma: c.Hyper["margin_mult"]}
			if err := checkFinite(map[string]float64{"margin_mult": l.gamma}); err != nil {
				return nil, err
			}
			if l.gamma < 0 {
				return nil, fmt.Errorf("hyper-parameter margin_mult must be ≥ 0, got %v", l.gamma)
			}
			var err error
			if l.pam, err = intHyper(c, "pam_iters", 0); err != nil {
				return nil, err
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *structClust) graph(b *builder) *G.Node {
	u := b.unitE()
	dS := rowDist(u, gather(u, b.index("medoid", b.B)))
	dG := rowDist(u, gather(u, b.index("oracle", b.B)))
	return relu(total(add(sub(dG, dS), b.input("margin", b.B))))
}

// Forward implements Loss.
func (l *structClust) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, 0, false); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	B := bt.B
	y, K := denseLabels(bt.Labels)
	if K < 2 {
		zeroGrads(grad, nil)
		return 0, nil
	}
	u := unitRows(bt.Emb, B, bt.D)
	S := gram(u, B, u, B, bt.D)
	d := make([]float64, B*B)
	for i := range B {
		for j := range B {
			d[i*B+j] = math.Sqrt(max(2-2*S[i*B+j], 0) + sqrtEps)
		}
	}
	fl := facility{d: d, B: B, y: y, K: K, gamma: l.gamma}
	med := fl.greedy()
	for range l.pam {
		med = fl.refine(med)
	}
	assign := fl.assign(med)
	score := 0.0
	for i := range B {
		score -= d[i*B+med[assign[i]]]
	}
	margin := l.gamma * (1 - nmi(assign, K, y, K))
	oracle, oscore := fl.oracle()
	n, err := l.r.get(shape{B: B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	mi, oi, mg := n.idx("medoid"), n.idx("oracle"), n.in("margin")
	for i := range B {
		mi[i], oi[i], mg[i] = med[assign[i]], oracle[y[i]], margin/float64(B)
	}
	if score+margin-oscore <= 1e-12 { // hinge inactive (up to rounding) on the float values
		zeroGrads(grad, nil)
		return 0, nil
	}
	return l.r.run(n, bt, grad)
}

// denseLabels maps labels to 0..K−1 in order of first appearance.
func denseLabels(labels []int) ([]int, int) {
	id := map[int]int{}
	out := make([]int, len(labels))
	for i, y := range labels {
		k, ok := id[y]
		if !ok {
			k = len(id)
			id[y] = k
		}
		out[i] = k
	}
	return out, len(id)
}

// nmi is the normalised mutual information MI(a, b)/√(H(a)H(b)) of two
// labelings with values in [0, ka) and [0, kb); 0 when either is constant.
func nmi(a []int, ka int, b []int, kb int) float64 {
	n := float64(len(a))
	joint := make([]float64, ka*kb)
	ca, cb := make([]float64, ka), make([]float64, kb)
	for i := range a {
		joint[a[i]*kb+b[i]]++
		ca[a[i]]++
		cb[b[i]]++
	}
	ent := func(c []float64) float64 {
		h := 0.0
		for _, v := range c {
			if v > 0 {
				h -= v / n * math.Log(v/n)
			}
		}
		return h
	}
	ha, hb := ent(ca), ent(cb)
	if ha <= 0 || hb <= 0 {
		return 0
	}
	mi := 0.0
	for i := range ka {
		for j := range kb {
			if v := joint[i*kb+j]; v > 0 {
				mi += v / n * math.Log(v*n/(ca[i]*cb[j]))
			}
		}
	}
	return mi / math.Sqrt(ha*hb)
}

// facility holds the loss-augmented facility-location inference of one batch.
type facility struct {
	d     []float64 // B×B distances
	B, K  int
	y     []int // dense labels in [0, K)
	gamma float64
}

// assign returns the index (into med) of each point's nearest medoid, the
// first on ties; a medoid is assigned to itself.
func (f *facility) assign(med []int) []int {
	out := make([]int, f.B)
	for i := range f.B {
		best := math.Inf(1)
		for c, m := range med {
			if m == i {
				out[i] = c
				break
			}
			if v := f.d[i*f.B+m]; v < best {
				best, out[i] = v, c
			}
		}
	}
	return out
}

// augmented is F(X, S) + γ(1 − NMI(g(S), y)).
func (f *facility) augmented(med []int) float64 {
	a := f.assign(med)
	s := 0.0
	for i := range f.B {
		s -= f.d[i*f.B+med[a[i]]]
	}
	return s + f.gamma*(1-nmi(a, len(med), f.y, f.K))
}

// greedy adds, K times, the point that maximises the augmented score.
func (f *facility) greedy() []int {
	var med []int
	used := make([]bool, f.B)
	for len(med) < f.K {
		best, bestJ := math.Inf(-1), -1
		for j := range f.B {
			if used[j] {
				continue
			}
			if v := f.augmented(append(med, j)); v > best {
				best, bestJ = v, j
			}
		}
		med = append(med, bestJ)
		used[bestJ] = true
	}
	return med
}

// refine is one PAM round: with the assignment of the current medoids fixed,
// each cluster in turn takes the member m maximising
// −Σ_{i∈cluster} d(i, m) + γ(1 − NMI(g(S with m), y)).
func (f *facility) refine(med []int) []int {
	med = append([]int(nil), med...)
	a := f.assign(med)
	for c := range med {
		var members []int
		for i, ac := range a {
			if ac == c {
				members = append(members, i)
			}
		}
		best, bestM := math.Inf(-1), med[c]
		for _, m := range members {
			s := 0.0
			for _, i := range members {
				s -= f.d[i*f.B+m]
			}
			trial := append([]int(nil), med...)
			trial[c] = m
			if dup(trial, c) {
				continue
			}
			if v := s + f.gamma*(1-nmi(f.assign(trial), len(trial), f.y, f.K)); v > best {
				best, bestM = v, m
			}
		}
		med[c] = bestM
	}
	return med
}

// dup reports whether med[c] also appears elsewhere in med.
func dup(med []int, c int) bool {
	for k, m := range med {
		if k != c && m == med[c] {
			return true
		}
	}
	return false
}

// oracle returns the best in-class medoid of each class (argmin of the summed
// in-class distance, first on ties) and the oracle score F̃.
func (f *facility) oracle() ([]int, float64) {
	med := make([]int, f.K)
	best := make([]float64, f.K)
	for k := range best {
		best[k] = math.Inf(1)
	}
	for j := range f.B {
		s := 0.0
		for i := range f.B {
			if f.y[i] == f.y[j] {
				s += f.d[i*f.B+j]
			}
		}
		if k := f.y[j]; s < best[k] {
			best[k], med[k] = s, j
		}
	}
	score := 0.0
	for _, v := range best {
		score -= v
	}
	return med, score
}
