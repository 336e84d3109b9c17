package losses

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/miners"
)

// Four unit vectors in 2-D at 0°, 60°, 90°, 180°, labels 0, 0, 1, 1.
// Distances: d01 = 1, d02 = √2, d03 = 2, d12 = 2 sin 15° = 0.5176381,
// d13 = √3, d23 = √2. Cosines: S01 = ½, S02 = 0, S03 = −1, S12 = √3/2,
// S13 = −½, S23 = 0.
func refBatch() Batch {
	b := Batch{B: 4, D: 2, Labels: []int{0, 0, 1, 1}, Rng: rand.New(rand.NewSource(1))}
	for _, deg := range []float64{0, 60, 90, 180} {
		r := deg * math.Pi / 180
		b.Emb = append(b.Emb, float32(math.Cos(r)), float32(math.Sin(r)))
	}
	return b
}

// refTriplets: (0,1,2), (1,0,2), (2,3,1), (3,2,0).
var refTriplets = miners.Triplets{A: []int32{0, 1, 2, 3}, P: []int32{1, 0, 3, 2}, N: []int32{2, 2, 1, 0}}

func refValue(t *testing.T, name string, c Config, setup func(Loss)) float64 {
	t.Helper()
	l := newLoss(t, name, c)
	if tl, ok := l.(interface{ setMiner(miners.Miner) }); ok {
		tl.setMiner(fixedMiner{refTriplets})
	}
	if setup != nil {
		setup(l)
	}
	b := refBatch()
	v, err := l.Forward(b, make([]float32, b.B*b.D))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// setProxies writes 2-D proxies (one row per class).
func setProxies(rows ...[2]float32) func(Loss) {
	return func(l Loss) {
		p := l.Params()[0]
		for c, r := range rows {
			p.Data[2*c], p.Data[2*c+1] = r[0], r[1]
		}
	}
}

func TestReferenceValues(t *testing.T) {
	const s3 = 0.8660254037844386 // √3/2
	cases := []struct {
		what  string
		name  string
		cfg   Config
		setup func(Loss)
		want  float64
	}{
		// [d_ap − d_an + 0.2]₊: (0,1,2) 1 − √2 + .2 < 0; (1,0,2) 1 − .5176381 + .2 = .6823619;
		// (2,3,1) √2 − .5176381 + .2 = 1.0965755; (3,2,0) √2 − 2 + .2 < 0. Mean over 4.
		{"triplet mean", "triplet", Config{}, nil, (0.6823619097949585 + 1.0965754721680537) / 4},
		{"triplet non-zero mean", "triplet", Config{Hyper: map[string]float64{"avg_nonzero": 1}}, nil, (0.6823619097949585 + 1.0965754721680537) / 2},
		// positives: (1 + 1 + √2 + √2)/4; negatives [1 − d_an]₊: (0 + .4823619 + .4823619 + 0)/4.
		{"contrastive", "contrastive", Config{}, nil, (2+2*math.Sqrt2)/4 + 2*(1-0.5176380902050415)/4},
		// β = 1.1: [d_ap − .9]₊ = .1, .1, .5142136, .5142136; [1.3 − d_an]₊ = 0, .7823619, .7823619, 0:
		// 6 non-zero terms.
		{"margin", "margin", Config{Hyper: map[string]float64{"beta": 1.1}}, nil,
			(0.2 + 2*(math.Sqrt2-0.9) + 2*(1.3-0.5176380902050415)) / 6},
		// ε = 0.6 keeps P̃/Ñ: 0:{1}/{2}, 1:{0}/{2}, 2:{3}/{0,1}, 3:{2}/{1};
		// ½log(1+Σe^{−2(S−½)}) + 1/40·log(1+Σe^{40(S−½)}), mean over 4 anchors.
		{"multisimilarity", "multisimilarity", Config{Hyper: map[string]float64{"epsilon": 0.6}}, nil,
			(0.5*math.Log(2) + 0.5*math.Log(2) + math.Log1p(math.Exp(-20))/40 + math.Log1p(math.Exp(40*(s3-0.5)))/40 +
				0.5*math.Log(1+math.E) + math.Log(1+math.Exp(-20)+math.Exp(40*(s3-0.5)))/40 +
				0.5*math.Log(1+math.E) + math.Log1p(math.Exp(-40))/40) / 4},
		// proxies (1,0), (0,1), s = 1: d = 2(1 − cos); with 2 classes the
		// per-sample loss is d_y − d_other: −2, 2(1−½) − 2(1−√3/2), −2, −2.
		{"proxynca", "proxynca", Config{NumClasses: 2, Dim: 2, Hyper: map[string]float64{"scale": 1}},
			setProxies([2]float32{1, 0}, [2]float32{0, 1}), (-6 + 1 - 2*(1-s3)) / 4},
		// log Σ_c e^{cos/T} − cos_y/T; cosines (1,0), (½,√3/2), (0,1), (−1,0).
		{"normsoftmax T=0.5", "normsoftmax", Config{NumClasses: 2, Dim: 2, Hyper: map[string]float64{"temperature": 0.5}},
			setProxies([2]float32{1, 0}, [2]float32{0, 1}), (3*math.Log1p(math.Exp(-2)) + math.Log1p(math.Exp(2*s3-1))) / 4},
		{"normsoftmax T=0.05", "normsoftmax", Config{NumClasses: 2, Dim: 2},
			setProxies([2]float32{1, 0}, [2]float32{0, 1}), (3*math.Log1p(math.Exp(-20)) + math.Log1p(math.Exp(20*s3-10))) / 4},
		// every anchor has one positive: log(1 + Σ_n e^{aᵀn − aᵀp}), + ν/b·Σ‖φ‖² = 0.005.
		{"npair", "npair", Config{}, nil,
			(math.Log(1+math.Exp(-0.5)+math.Exp(-1.5))+math.Log(1+math.Exp(s3-0.5)+math.Exp(-1))+
				math.Log(2+math.Exp(s3))+math.Log(1+math.Exp(-1)+math.Exp(-0.5)))/4 + 0.005},
		// centres (0,1) for class 0, (1,0) for class 1; target cosines 0, √3/2, 0, −1 (the last
		// has θ + m > π: target logit 16(−1 − ½ sin ½)). Values from an acos-based evaluation.
		{"arcface", "arcface", Config{NumClasses: 2, Dim: 2},
			setProxies([2]float32{0, 1}, [2]float32{1, 0}), 16.93023118504592},
	}
	for _, tc := range cases {
		got := refValue(t, tc.name, tc.cfg, tc.setup)
		if math.Abs(got-tc.want) > 1e-5*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: L = %.9g, want %.9g", tc.what, got, tc.want)
		} else {
			t.Logf("%s: L = %.9g (want %.9g)", tc.what, got, tc.want)
		}
	}
}

// TestCachedGraphMatchesFresh runs one loss object on several batches of two
// shapes and compares each result with a newly built loss: overwriting the
// input backing slices must behave like a fresh graph.
func TestCachedGraphMatchesFresh(t *testing.T) {
	for _, info := range All() {
		if info.Teacher {
			continue // needs a trained teacher (mpn_test.go)
		}
		cfg := Config{NumClasses: 4, Dim: 6, Seed: 1}
		cached := newLoss(t, info.Name, cfg)
		for step := 0; step < 4; step++ {
			B := []int{12, 8}[step%2]
			b := randomBatch(int64(100+step), B, 6, 4)
			b.Rng = rand.New(rand.NewSource(int64(step)))
			g1 := make([]float32, B*6)
			v1, err := cached.Forward(b, g1)
			if err != nil {
				t.Fatal(err)
			}
			fresh := newLoss(t, info.Name, cfg)
			b.Rng = rand.New(rand.NewSource(int64(step)))
			g2 := make([]float32, B*6)
			v2, err := fresh.Forward(b, g2)
			if err != nil {
				t.Fatal(err)
			}
			if v1 != v2 {
				t.Fatalf("%s step %d: cached L = %v, fresh L = %v", info.Name, step, v1, v2)
			}
			for i := range g1 {
				if g1[i] != g2[i] {
					t.Fatalf("%s step %d: gradient %d differs: %v vs %v", info.Name, step, i, g1[i], g2[i])
				}
			}
		}
	}
}

func TestBadInputs(t *testing.T) {
	good := randomBatch(1, 8, 5, 3)
	good.Rng = rand.New(rand.NewSource(1))
	for _, info := range All() {
		if info.Teacher {
			continue // needs a trained teacher (mpn_test.go)
		}
		l := newLoss(t, info.Name, Config{NumClasses: 3, Dim: 5})
		bad := map[string]func(Batch) (Batch, []float32){
			"short embeddings": func(b Batch) (Batch, []float32) { b.Emb = b.Emb[:10]; return b, make([]float32, 40) },
			"short labels":     func(b Batch) (Batch, []float32) { b.Labels = b.Labels[:3]; return b, make([]float32, 40) },
			"short gradient":   func(b Batch) (Batch, []float32) { return b, make([]float32, 39) },
			"NaN": func(b Batch) (Batch, []float32) {
				b.Emb = append([]float32(nil), b.Emb...)
				b.Emb[7] = float32(math.NaN())
				return b, make([]float32, 40)
			},
			"negative label": func(b Batch) (Batch, []float32) {
				b.Labels = append([]int(nil), b.Labels...)
				b.Labels[2] = -1
				return b, make([]float32, 40)
			},
			"B = 1": func(b Batch) (Batch, []float32) {
				b.B, b.Emb, b.Labels = 1, b.Emb[:5], b.Labels[:1]
				return b, make([]float32, 5)
			},
		}
		if info.Miner != "" || info.Name == "npair" {
			bad["nil rng"] = func(b Batch) (Batch, []float32) { b.Rng = nil; return b, make([]float32, 40) }
		}
		if strings.Contains("proxynca normsoftmax arcface", info.Name) {
			bad["label ≥ NumClasses"] = func(b Batch) (Batch, []float32) {
				b.Labels = append([]int(nil), b.Labels...)
				b.Labels[0] = 3
				return b, make([]float32, 40)
			}
			bad["wrong D"] = func(b Batch) (Batch, []float32) {
				b.D, b.B, b.Labels = 4, 10, append(b.Labels, 0, 1)
				return b, make([]float32, 40)
			}
		}
		for what, mk := range bad {
			b, g := mk(good)
			if _, err := l.Forward(b, g); err == nil {
				t.Errorf("%s: %s: no error", info.Name, what)
			}
		}
		if _, err := l.Forward(good, make([]float32, 40)); err != nil {
			t.Errorf("%s: good batch after bad ones: %v", info.Name, err)
		}
	}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"triplet", Config{Hyper: map[string]float64{"margn": 1}}},
		{"triplet", Config{Hyper: map[string]float64{"margin": -1}}},
		{"triplet", Config{Hyper: map[string]float64{"avg_nonzero": 0.5}}},
		{"triplet", Config{Miner: "nope"}},
		{"multisimilarity", Config{Miner: "semihard"}},
		{"margin", Config{Hyper: map[string]float64{"class_beta": 1}}},
		{"proxynca", Config{NumClasses: 1, Dim: 4}},
		{"arcface", Config{NumClasses: 4}},
		{"nope", Config{}},
	} {
		if _, err := New(c.name, c.cfg); err == nil {
			t.Errorf("New(%s, %+v): no error", c.name, c.cfg)
		}
	}
}

// TestNoTuples: a batch of distinct labels has no positives; tuple losses
// return 0 and zero gradients.
func TestNoTuples(t *testing.T) {
	b := randomBatch(3, 6, 4, 6)
	b.Rng = rand.New(rand.NewSource(1))
	for _, name := range []string{"contrastive", "triplet", "margin", "multisimilarity"} {
		l := newLoss(t, name, Config{})
		g := make([]float32, 24)
		for i := range g {
			g[i] = 1
		}
		v, err := l.Forward(b, g)
		if err != nil || v != 0 {
			t.Fatalf("%s: L = %v, err %v; want 0, nil", name, v, err)
		}
		for _, x := range g {
			if x != 0 {
				t.Fatalf("%s: non-zero gradient without tuples", name)
			}
		}
	}
}

// TestArcFaceFallbackGradient checks the gradient where θ + m > π.
func TestArcFaceFallbackGradient(t *testing.T) {
	l := newLoss(t, "arcface", Config{NumClasses: 3, Dim: 5, Seed: 2})
	b := randomBatch(5, 8, 5, 3)
	w := l.Params()[0].Data
	for k := 0; k < 5; k++ { // sample 0 (class 0) opposite its centre
		b.Emb[k] = -w[k] + 0.01*b.Emb[k]
	}
	gradCheck(t, l, b, 1)
}
