package regularizers

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
)

// replay re-runs an augmenter's last draws (DAS: s, b; mixup: λ, π) on new
// embeddings: loss∘replay is the function whose gradient Backward claims.
type replay struct {
	Augmenter
	produce func(emb []float32) []View
}

func (r replay) Augment(emb []float32, _ []int, _, _ int, _ *rand.Rand) ([]View, error) {
	return r.produce(emb), nil
}

// TestAugmenterGradients checks dL/dE of loss∘augmenter (Apply) against
// finite differences, for DAS (on and off the sphere) and mixup, with a
// tuple loss (deterministic miner), a pair loss and a ranking loss.
func TestAugmenterGradients(t *testing.T) {
	const B, D, C = 6, 5, 3
	augs := []struct {
		name string
		make func() (Augmenter, func([]float32) []View)
	}{
		{"das-sphere", func() (Augmenter, func([]float32) []View) {
			d, _ := NewDAS(DASParams{T: 2, K: 2, Z: 4, Rs: 0.3, Rb: 0.3}, C, D, true)
			return d, d.produce
		}},
		{"das-linear", func() (Augmenter, func([]float32) []View) {
			d, _ := NewDAS(DASParams{T: 2, K: 3, Z: 2, Rs: 0.3, Rb: 0.5}, C, D, false)
			return d, d.produce
		}},
		{"mixup", func() (Augmenter, func([]float32) []View) {
			m, _ := NewMixup(2)
			return m, m.apply
		}},
	}
	lossCases := []struct {
		name string
		hyp  map[string]float64
	}{
		{"triplet", nil},
		{"margin", nil},
		{"npair", nil},
		{"multisimilarity", map[string]float64{"epsilon": 10}}, // ε large: no pair selection, a smooth loss
		{"smoothap", map[string]float64{"tau": 0.1}},
	}
	for ai, ac := range augs {
		for _, lc := range lossCases {
			t.Run(ac.name+"/"+lc.name, func(t *testing.T) {
				l := newLoss(t, lc.name, losses.Config{Dim: D, Hyper: lc.hyp})
				if mw, ok := l.(losses.MinerWrapper); ok {
					mw.WrapMiner(func(miners.Miner) miners.Miner { return firstMiner{} })
				}
				aug, produce := ac.make()
				b := randomBatch(int64(40+ai), B, D, C, true)
				b.Rng = rand.New(rand.NewSource(1))
				// Two warm-up steps fill DAS's recorder and banks.
				for s := 0; s < 3; s++ {
					if _, err := Apply(l, aug, b, rand.New(rand.NewSource(int64(s))), make([]float32, B*D)); err != nil {
						t.Fatal(err)
					}
				}
				r := replay{aug, produce}
				f := func(b losses.Batch, grad []float32) float64 {
					b.Rng = rand.New(rand.NewSource(1))
					v, err := Apply(l, r, b, nil, grad)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				fdCheck(t, ac.name+"∘"+lc.name, b, f, 2e-3)
			})
		}
	}
}

func TestDASMechanics(t *testing.T) {
	const D = 6
	p := DASParams{T: 3, K: 2, Z: 3, Rs: 0.1, Rb: 0.5}
	d, err := NewDAS(p, 2, D, false)
	if err != nil {
		t.Fatal(err)
	}
	// Class 0 is strong on channels 1 and 4, class 1 on channels 0 and 5.
	mk := func(base []float32, jitter float32) []float32 {
		out := append([]float32(nil), base...)
		for k := range out {
			out[k] += jitter * float32(k)
		}
		return out
	}
	c0 := []float32{0.1, 2, 0.2, 0.3, 1.5, 0}
	c1 := []float32{3, 0.1, 0, 0.2, 0.1, 2.5}
	rng := rand.New(rand.NewSource(9))
	var all [][]float32
	for step := 0; step < 4; step++ {
		emb := append(append(append(mk(c0, 0.01*float32(step)), mk(c0, -0.02)...), mk(c1, 0.03)...), mk(c1, 0)...)
		all = append(all, emb)
		views, err := d.Augment(emb, []int{0, 0, 1, 1}, 4, D, rng)
		if err != nil {
			t.Fatal(err)
		}
		v := views[0]
		if v.B != 4+4*p.T || len(v.Labels) != v.B || len(v.Emb) != v.B*D {
			t.Fatalf("view of %d rows, want B + B·T = %d", v.B, 4+4*p.T)
		}
		for j := 4; j < v.B; j++ {
			if v.Labels[j] != v.Labels[(j-4)/p.T] {
				t.Fatalf("produced row %d labelled %d, anchor %d", j, v.Labels[j], v.Labels[(j-4)/p.T])
			}
		}
		// FIFO: two transformations per class per step, capacity Z = 3.
		if want := min(2*(step+1), p.Z); d.fill[0] != want || d.fill[1] != want {
			t.Fatalf("step %d: fill %v, want %d", step, d.fill, want)
		}
	}
	// Recorder: 8 rows per class, each adds 1 to its top-2 channels.
	for c, want := range [][2]int{{1, 4}, {0, 5}} {
		row := d.freq[c*D : (c+1)*D]
		if row[want[0]] != 8 || row[want[1]] != 8 {
			t.Fatalf("class %d recorder %v, want 8 on channels %v", c, row, want)
		}
		m := topK(row, p.K)
		if !(m[0] == want[0] && m[1] == want[1]) && !(m[0] == want[1] && m[1] == want[0]) {
			t.Fatalf("class %d mask %v, want %v", c, m, want)
		}
	}
	// The bank holds the newest Z = 3 transformations of class 0 in FIFO
	// order: 8 were written (slots 0,1,2,0,1,2,0,1), the last ones being
	// step 3's (0−1), (1−0) in slots 0, 1 and step 2's (1−0) in slot 2.
	diff := func(emb []float32, i, j int) []float32 {
		out := make([]float32, D)
		for k := range out {
			out[k] = emb[i*D+k] - emb[j*D+k]
		}
		return out
	}
	for slot, want := range [][]float32{diff(all[3], 0, 1), diff(all[3], 1, 0), diff(all[2], 1, 0)} {
		if fmt.Sprint(d.bank[slot*D:(slot+1)*D]) != fmt.Sprint(want) {
			t.Fatalf("bank slot %d = %v, want %v", slot, d.bank[slot*D:(slot+1)*D], want)
		}
	}
	// Scaling touches only the masked channels, within [1 − r_s, 1 + r_s].
	for j, a := range d.anchor {
		mask := map[int]bool{1: true, 4: true}
		if d.labels[a] == 1 {
			mask = map[int]bool{0: true, 5: true}
		}
		for k, s := range d.scale[j*D : (j+1)*D] {
			if !mask[k] && s != 1 {
				t.Fatalf("unmasked channel %d scaled by %v", k, s)
			}
			if mask[k] && (s < float32(1-p.Rs) || s > float32(1+p.Rs)) {
				t.Fatalf("scale %v outside [1 ± %v]", s, p.Rs)
			}
		}
	}
}

func TestDASStateRoundTrip(t *testing.T) {
	const B, D, C = 8, 5, 4
	p := DefaultDASParams()
	a, _ := NewDAS(p, C, D, true)
	b := randomBatch(3, B, D, C, true)
	for s := 0; s < 3; s++ {
		if _, err := a.Augment(b.Emb, b.Labels, B, D, rand.New(rand.NewSource(int64(s)))); err != nil {
			t.Fatal(err)
		}
	}
	st, err := a.State()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewDAS(p, C, D, true)
	if err := c.SetState(st); err != nil {
		t.Fatal(err)
	}
	va, _ := a.Augment(b.Emb, b.Labels, B, D, rand.New(rand.NewSource(7)))
	vc, _ := c.Augment(b.Emb, b.Labels, B, D, rand.New(rand.NewSource(7)))
	if fmt.Sprint(va[0].Emb) != fmt.Sprint(vc[0].Emb) {
		t.Fatal("restored DAS produces different embeddings")
	}
	s2, _ := a.State()
	s3, _ := c.State()
	if !bytes.Equal(s2, s3) {
		t.Fatal("states diverged after one more step")
	}
	other, _ := NewDAS(DASParams{T: 3, K: 4, Z: 5, Rs: 0.01, Rb: 0.01}, C, D, true)
	if err := other.SetState(st); err == nil {
		t.Fatal("state of Z = 10 loaded into Z = 5")
	}
}

func TestDASParams(t *testing.T) {
	p, err := ParseDASParams("3,8,20,0.02,0.05")
	if err != nil || p != (DASParams{T: 3, K: 8, Z: 20, Rs: 0.02, Rb: 0.05}) {
		t.Fatalf("positional: %+v, %v", p, err)
	}
	p, err = ParseDASParams("K=8, rb=0.1")
	if err != nil || p != (DASParams{T: 3, K: 8, Z: 10, Rs: 0.01, Rb: 0.1}) {
		t.Fatalf("k=v: %+v, %v", p, err)
	}
	if q, err := ParseDASParams(p.String()); err != nil || q != p {
		t.Fatalf("String round trip: %+v, %v", q, err)
	}
	for _, bad := range []string{"1,2,3", "T=0", "K=1.5", "rs=1", "x=1", "T=a"} {
		if _, err := ParseDASParams(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
	if _, err := NewDAS(DefaultDASParams(), 3, 2, true); err == nil {
		t.Fatal("K = 4 > D = 2 accepted")
	}
}

func TestMixupDraws(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	const n = 20000
	var s, s2 float64
	for i := 0; i < n; i++ {
		x := betaSample(rng, 2, 2)
		if x <= 0 || x >= 1 {
			t.Fatalf("Beta draw %v outside (0, 1)", x)
		}
		s += x
		s2 += x * x
	}
	mean, vr := s/n, s2/n-(s/n)*(s/n)
	// Beta(2, 2): mean 1/2, variance αβ/((α+β)²(α+β+1)) = 1/20.
	if math.Abs(mean-0.5) > 0.01 || math.Abs(vr-0.05) > 0.003 {
		t.Fatalf("Beta(2,2) mean %.4f var %.4f, want 0.5, 0.05", mean, vr)
	}
	for _, a := range []float64{0.4, 1, 5} {
		var m float64
		for i := 0; i < n; i++ {
			m += betaSample(rng, a, a)
		}
		if math.Abs(m/n-0.5) > 0.01 {
			t.Fatalf("Beta(%v,%v) mean %.4f", a, a, m/n)
		}
	}
	mx, _ := NewMixup(2)
	b := randomBatch(1, 6, 3, 3, true)
	views, err := mx.Augment(b.Emb, b.Labels, 6, 3, rng)
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 2 || math.Abs(views[0].Weight+views[1].Weight-1) > 1e-12 {
		t.Fatalf("mixup views %d, weights must sum to 1", len(views))
	}
	for i, j := range mx.perm {
		if views[1].Labels[i] != b.Labels[j] || views[0].Labels[i] != b.Labels[i] {
			t.Fatal("mixed label entries are not (y_i, y_π(i))")
		}
	}
	if _, err := NewMixup(0); err == nil {
		t.Fatal("α = 0 accepted")
	}
}
