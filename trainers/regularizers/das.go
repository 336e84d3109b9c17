package regularizers

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// DASParams are the hyper-parameters of DAS (Liu et al. 2022 §3–4): T embeddings
// produced per anchor, K discriminative features per class, bank capacity Z
// per class, scaling range r_s and shifting scale r_b.
type DASParams struct {
	T  int     `json:"T" yaml:"T"`
	K  int     `json:"K" yaml:"K"`
	Z  int     `json:"Z" yaml:"Z"`
	Rs float64 `json:"rs" yaml:"rs"`
	Rb float64 `json:"rb" yaml:"rb"`
}

// DefaultDASParams are the paper's defaults (T, K, Z, r_s, r_b) = (3, 4, 10,
// 1e−2, 1e−2) (Liu et al. 2022 §4, "Implementation details").
func DefaultDASParams() DASParams { return DASParams{T: 3, K: 4, Z: 10, Rs: 1e-2, Rb: 1e-2} }

// String writes p in the k=v form ParseDASParams reads.
func (p DASParams) String() string {
	return fmt.Sprintf("T=%d,K=%d,Z=%d,rs=%g,rb=%g", p.T, p.K, p.Z, p.Rs, p.Rb)
}

// ParseDASParams reads "T,K,Z,rs,rb" (five numbers in that order) or k=v
// pairs ("K=8,rb=0.05") overriding the defaults.
func ParseDASParams(s string) (DASParams, error) {
	p := DefaultDASParams()
	s = strings.TrimSpace(s)
	if s == "" {
		return p, nil
	}
	parts := strings.Split(s, ",")
	if !strings.Contains(s, "=") {
		if len(parts) != 5 {
			return p, fmt.Errorf("das-params %q: want T,K,Z,rs,rb (5 numbers) or k=v pairs", s)
		}
		for i, name := range []string{"T", "K", "Z", "rs", "rb"} {
			parts[i] = name + "=" + parts[i]
		}
	}
	for _, kv := range parts {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return p, fmt.Errorf("das-params: %q is not name=number", kv)
		}
		switch k {
		case "T", "K", "Z":
			if f != math.Trunc(f) || f > 1e6 {
				return p, fmt.Errorf("das-params: %s = %v must be an integer", k, v)
			}
			switch k {
			case "T":
				p.T = int(f)
			case "K":
				p.K = int(f)
			default:
				p.Z = int(f)
			}
		case "rs":
			p.Rs = f
		case "rb":
			p.Rb = f
		default:
			return p, fmt.Errorf("das-params: unknown parameter %q (T, K, Z, rs, rb)", k)
		}
	}
	return p, p.Validate(0)
}

// Validate checks the ranges (D > 0 also bounds K ≤ D).
func (p DASParams) Validate(D int) error {
	switch {
	case p.T < 1:
		return fmt.Errorf("das: T = %d must be ≥ 1", p.T)
	case p.K < 1 || (D > 0 && p.K > D):
		return fmt.Errorf("das: K = %d must lie in [1, D]", p.K)
	case p.Z < 1:
		return fmt.Errorf("das: Z = %d must be ≥ 1", p.Z)
	case !(p.Rs > 0 && p.Rs < 1):
		return fmt.Errorf("das: r_s = %v must lie in (0, 1)", p.Rs)
	case !(p.Rb >= 0) || math.IsInf(p.Rb, 0):
		return fmt.Errorf("das: r_b = %v must be ≥ 0", p.Rb)
	}
	return nil
}

// DAS is Densely-Anchored Sampling (Liu et al. 2022 §3, Alg. 1): for every anchor
// embedding v (a batch row, label y) it produces T embeddings
//
//	v′_t = N(s_t ⊙ v + b_t)                                          (eqs. 3–4)
//
// that join the batch with label y, as positives of y and negatives of the
// other classes (§3.4: the augmented set feeds the unchanged miner and
// loss). N is the projection onto the unit sphere when the model
// normalises its embeddings (Sphere; §3 "we normalize both v and v′"),
// the identity otherwise.
//
// Discriminative Feature Scaling (§3.2). A frequency recorder P ∈ ℕ^{C×d}
// counts, per class, how often each channel is among the top-K entries of a
// class member (eq. 7, updated with the batch first); the class mask M[c]
// marks the K most frequent channels of P[c] (eq. 8; ties go to the lower
// channel), and
//
//	s = γ ⊙ M[y] + (1 − M[y]),  γ ~ U[1 − r_s, 1 + r_s]^d          (eq. 9)
//
// Memorized Transformation Shifting (§3.3). For every ordered pair i ≠ j of
// same-class batch rows the transformation t = v_i − v_j (eq. 10) is
// enqueued into the class's FIFO bank of capacity Z (eq. 11; the oldest
// entry is overwritten), and
//
//	b = r_b · t,  t ~ U{filled entries of B[y]}                       (eq. 12)
//
// (the paper samples among all Z slots of a zero-initialised bank; drawing
// only filled slots avoids zero shifts early on). A class without any
// stored transformation gets b = 0.
//
// Jacobian (Backward). s, the mask and b are treated as constants: the mask
// is discrete, γ is noise and the bank stores detached values (memorised
// transformations of earlier iterations, and of this batch, enter as data).
// With u = s ⊙ v + b,
//
//	∂v′/∂v = diag(s)                                (Sphere off)
//	∂v′/∂v = (I − v′v′ᵀ)/‖u‖ · diag(s)              (Sphere on)
//
// so dL/dv = G_v + Σ_t s_t ⊙ ((I − v′_t v′_tᵀ) G_{v′_t})/‖u_t‖.
//
// State. P and the banks persist across steps and epochs; State/SetState
// serialise them for the trainer's checkpoint, so a resumed run continues
// with the same memory. All random draws (γ, bank slots) come from the rng
// given to Augment.
type DAS struct {
	P      DASParams
	C, D   int
	Sphere bool

	freq []int64   // C×D frequency recorder matrix P
	bank []float32 // C×Z×D transformation banks
	head []int     // per class: next slot to write
	fill []int     // per class: filled slots (≤ Z)

	// the last Augment
	B      int
	anchor []int     // produced row → anchor row
	scale  []float32 // produced row → s (D)
	shift  []float32 // produced row → b (D)
	inv    []float64 // produced row → 1/‖u‖ (Sphere)
	out    []float32 // (B + B·T)×D: the batch, then the produced rows
	labels []int
}

// NewDAS returns a DAS augmenter for C training classes and dimension D.
func NewDAS(p DASParams, C, D int, sphere bool) (*DAS, error) {
	if C < 1 || D < 1 {
		return nil, fmt.Errorf("das: need C ≥ 1 classes and D ≥ 1 (got %d, %d)", C, D)
	}
	if err := p.Validate(D); err != nil {
		return nil, err
	}
	return &DAS{P: p, C: C, D: D, Sphere: sphere,
		freq: make([]int64, C*D), bank: make([]float32, C*p.Z*D), head: make([]int, C), fill: make([]int, C)}, nil
}

// Name implements Augmenter.
func (d *DAS) Name() string { return "das(" + d.P.String() + ")" }

// topK returns the indices of the K largest values of x (ties: lower index).
func topK[T int64 | float32](x []T, K int) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] > x[idx[b]] })
	return idx[:K]
}

// Augment implements Augmenter.
func (d *DAS) Augment(emb []float32, labels []int, B, D int, rng *rand.Rand) ([]View, error) {
	if D != d.D || len(emb) != B*D || len(labels) != B {
		return nil, fmt.Errorf("batch of %d values, %d labels is not B×D = %d×%d", len(emb), len(labels), B, d.D)
	}
	for i, y := range labels {
		if y < 0 || y >= d.C {
			return nil, fmt.Errorf("label %d of row %d outside the %d training classes", y, i, d.C)
		}
	}
	p := d.P
	row := func(i int) []float32 { return emb[i*D : (i+1)*D] }
	// DFS: update the frequency recorder (eq. 7), then the class masks (eq. 8).
	for i, y := range labels {
		for _, k := range topK(row(i), p.K) {
			d.freq[y*D+k]++
		}
	}
	masks := map[int][]int{}
	for _, y := range labels {
		if _, ok := masks[y]; !ok {
			masks[y] = topK(d.freq[y*D:(y+1)*D], p.K)
		}
	}
	// MTS: enqueue the intra-class transformations (eqs. 10–11).
	for i, yi := range labels {
		for j, yj := range labels {
			if i == j || yi != yj {
				continue
			}
			slot := d.bank[(yi*p.Z+d.head[yi])*D:][:D]
			for k := range slot {
				slot[k] = emb[i*D+k] - emb[j*D+k]
			}
			d.head[yi] = (d.head[yi] + 1) % p.Z
			d.fill[yi] = min(d.fill[yi]+1, p.Z)
		}
	}
	// Produce T embeddings per anchor (eqs. 3–4, 9, 12).
	n := B * p.T
	d.B = B
	d.anchor = make([]int, n)
	d.scale = make([]float32, n*D)
	d.shift = make([]float32, n*D)
	d.labels = make([]int, B+n)
	copy(d.labels, labels)
	for i, y := range labels {
		for t := 0; t < p.T; t++ {
			j := i*p.T + t
			d.anchor[j], d.labels[B+j] = i, y
			s := d.scale[j*D : (j+1)*D]
			for k := range s {
				s[k] = 1
			}
			for _, k := range masks[y] {
				s[k] = float32(1 - p.Rs + 2*p.Rs*rng.Float64())
			}
			if f := d.fill[y]; f > 0 {
				z := rng.Intn(f)
				b := d.shift[j*D : (j+1)*D]
				for k, v := range d.bank[(y*p.Z+z)*D:][:D] {
					b[k] = float32(p.Rb) * v
				}
			}
		}
	}
	return d.produce(emb), nil
}

// produce computes the view [E; v′_1 … v′_{B·T}] from the drawn s and b
// (deterministic in emb: gradient checks replay it with the draws fixed).
func (d *DAS) produce(emb []float32) []View {
	D, B, n := d.D, d.B, len(d.anchor)
	d.inv = make([]float64, n)
	d.out = make([]float32, (B+n)*D)
	copy(d.out, emb)
	for j, i := range d.anchor {
		s, b := d.scale[j*D:(j+1)*D], d.shift[j*D:(j+1)*D]
		o := d.out[(B+j)*D : (B+j+1)*D]
		var nn float64
		for k := range o {
			o[k] = s[k]*emb[i*D+k] + b[k]
			nn += float64(o[k]) * float64(o[k])
		}
		d.inv[j] = 1
		if d.Sphere {
			d.inv[j] = 1 / math.Sqrt(nn+1e-12)
			for k := range o {
				o[k] = float32(float64(o[k]) * d.inv[j])
			}
		}
	}
	return []View{{Emb: d.out, Labels: d.labels, B: B + n, Weight: 1}}
}

// Backward implements Augmenter (Jacobian in the type comment).
func (d *DAS) Backward(viewGrads [][]float32, grad []float32) {
	D, B := d.D, d.B
	g := viewGrads[0]
	for k := 0; k < B*D; k++ {
		grad[k] += g[k]
	}
	for j, a := range d.anchor {
		gj := g[(B+j)*D : (B+j+1)*D]
		o := d.out[(B+j)*D : (B+j+1)*D]
		s := d.scale[j*D : (j+1)*D]
		var dot float64
		if d.Sphere {
			for k := range gj {
				dot += float64(gj[k]) * float64(o[k])
			}
		}
		for k := range gj {
			v := (float64(gj[k]) - dot*float64(o[k])) * d.inv[j]
			grad[a*D+k] += float32(float64(s[k]) * v)
		}
	}
}

// dasState is the serialised memory of DAS.
type dasState struct {
	C, D, Z    int
	Freq       []int64
	Bank       []float32
	Head, Fill []int
}

// State implements Stateful.
func (d *DAS) State() ([]byte, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(dasState{C: d.C, D: d.D, Z: d.P.Z, Freq: d.freq, Bank: d.bank, Head: d.head, Fill: d.fill})
	return buf.Bytes(), err
}

// SetState implements Stateful.
func (d *DAS) SetState(b []byte) error {
	var s dasState
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&s); err != nil {
		return fmt.Errorf("das: read state: %w", err)
	}
	if s.C != d.C || s.D != d.D || s.Z != d.P.Z || len(s.Freq) != d.C*d.D || len(s.Bank) != d.C*d.P.Z*d.D || len(s.Head) != d.C || len(s.Fill) != d.C {
		return fmt.Errorf("das: saved state (C=%d, D=%d, Z=%d) does not match (C=%d, D=%d, Z=%d)", s.C, s.D, s.Z, d.C, d.D, d.P.Z)
	}
	d.freq, d.bank, d.head, d.fill = s.Freq, s.Bank, s.Head, s.Fill
	return nil
}
