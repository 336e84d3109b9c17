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

// refCase is one TestReferenceValues case: the loss named name, configured
// by cfg and set up (parameters written) by setup, on refBatch with the
// triplets refTriplets, must give want, worked out by hand.
type refCase struct {
	what  string
	name  string
	cfg   Config
	setup func(Loss)
	want  float64
}

// moreRefCases are the reference values of losses whose tests live in their
// own file (docs/extending.md): that file's init appends to it.
var moreRefCases []refCase

func TestReferenceValues(t *testing.T) {
	const s3 = 0.8660254037844386  // √3/2
	const d12 = 0.5176380902050415 // 2 sin 15°
	sq2 := math.Sqrt2
	e := math.Exp
	// Lifted: both positive pairs see the same four negative terms.
	liftLog := math.Log(e(1-sq2) + e(-1) + e(1-d12) + e(1-math.Sqrt(3)))
	// Smooth-AP / RS@k: each query has one positive x; r_q = Σ_{z≠q,x} σ((s_qz − s_qx)/0.01).
	r := []float64{
		sigmoid(-50) + sigmoid(-150),          // q0: x=1 (½); z=2 (0), z=3 (−1)
		sigmoid(100*(s3-0.5)) + sigmoid(-100), // q1: x=0 (½); z=2 (√3/2), z=3 (−½)
		0.5 + sigmoid(100*s3),                 // q2: x=3 (0); z=0 (0, a tie), z=1 (√3/2)
		sigmoid(-100) + sigmoid(-50),          // q3: x=2 (0); z=0 (−1), z=1 (−½)
	}
	ap, rs := 0.0, 0.0
	for _, rq := range r {
		ap += 1 / (1 + rq) / 4
		for _, k := range []float64{1, 2, 4, 8, 16} {
			rs += sigmoid(k-1-rq) / 20 // |P_q| = 1 = min(k, |P_q|), no clip
		}
	}
	// SoftTriple with centres (1,0), (0,1) for class 0 and (−1,0), (0,−1) for
	// class 1: S^c = softmax-weighted mean of the two centre cosines a, b.
	st := func(a, b float64) float64 { return (e(a/0.1)*a + e(b/0.1)*b) / (e(a/0.1) + e(b/0.1)) }
	ce := func(sy, so float64) float64 { // −log softmax with margin δ = 0.01, λ = 8
		return math.Log(e(8*(sy-0.01))+e(8*so)) - 8*(sy-0.01)
	}
	softTripleWant := (ce(st(1, 0), st(-1, 0)) + ce(st(0.5, s3), st(-0.5, -s3)) +
		ce(st(0, -1), st(0, 1)) + ce(st(1, 0), st(-1, 0))) / 4
	softTripleWant += 0.2 / 4 * 2 * math.Sqrt(2+1e-5) // τ/(C·K·(K−1)) · Σ √(2 + ε − 0)

	cases := []refCase{
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
		// R = 3 nodes −1, 0, 1 (Δ = 1). S⁺ = {½, 0}: h⁺ = (0, ¾, ¼), CDF⁺ = (0, ¾, 1).
		// S⁻ = {0, −1, √3/2, −½}: h⁻ = (3/2, 5/2 − √3/2, √3/2)/4. L = h⁻₂·¾ + h⁻₃.
		{"histogram R=3", "histogram", Config{Hyper: map[string]float64{"bins": 3}}, nil,
			(2.5-s3)/4*0.75 + s3/4},
		// D = 2: var(x) = (x₁ − x₂)²/4, so d_S = (v₁ − v₂)²/(a₁ − a₂)². Only (1,0,2) is
		// non-zero: a = (½, √3/2), (a₁−a₂)² = 1 − √3/2, p−a: 1 + √3/2, n−a: (3/2 − √3/2)².
		// Regulariser λ/b Σ|φ₁ + φ₂| = 0.005/4·(1 + ½ + √3/2 + 1 + 1).
		{"snr", "snr", Config{}, nil,
			((1+s3)-(1.5-s3)*(1.5-s3))/(1-s3) + 0.2 + 0.005/4*(3.5+s3)},
		// J01 = log(…) + 1, J23 = log(…) + √2; L = (J01² + J23²)/(2·2).
		{"lifted", "lifted", Config{}, nil,
			(math.Pow(liftLog+1, 2) + math.Pow(liftLog+sq2, 2)) / 4},
		// Per anchor: d(a,p) + log Σ_n e^{1 − d(a,n)}; mean + ν/b Σ‖φ‖² = 0.005.
		{"genlifted", "genlifted", Config{}, nil,
			(1+math.Log(e(1-sq2)+e(-1))+1+math.Log(e(1-d12)+e(1-math.Sqrt(3)))+
				sq2+math.Log(e(1-sq2)+e(1-d12))+sq2+math.Log(e(-1)+e(1-math.Sqrt(3))))/4 + 0.005},
		// Supports {0}, {2}; queries 1 (‖·‖² to μ0, μ1: 1, 2 − √3) and 3 (4, 2).
		{"prototypical", "prototypical", Config{}, nil,
			(math.Log1p(e(math.Sqrt(3)-1)) + math.Log1p(e(-2))) / 2},
		{"smoothap", "smoothap", Config{}, nil, 1 - ap},
		{"recallk", "recallk", Config{}, nil, 1 - rs},
		// N-pair part as in reference_test.go; angular part with tan²α = 1:
		// f = 4(φ_a + φ_p)ᵀφ_n − 4φ_aᵀφ_p; anchors 0, 1: log(1 + e^{4·√3/2 − 2} + e^{−8});
		// anchors 2, 3: log(1 + e^{−4} + e^{4(√3/2 − ½)}); λ = 2.
		{"angular", "angular", Config{}, nil,
			(math.Log(1+e(-0.5)+e(-1.5))+math.Log(1+e(s3-0.5)+e(-1))+math.Log(2+e(s3))+math.Log(1+e(-1)+e(-0.5)))/4 + 0.005 +
				2*(2*math.Log(1+e(4*s3-2)+e(-8))+2*math.Log(1+e(-4)+e(4*(s3-0.5))))/4},
		// Two classes: no second negative, the triplet term with γ₁ = 1 alone:
		// (1 − √2 + 1) + (1 − d12 + 1) + (√2 − d12 + 1) + (√2 − 2 + 1), mean.
		{"quadruplet (2 classes)", "quadruplet", Config{}, nil,
			((2 - sq2) + (2 - d12) + (sq2 - d12 + 1) + (sq2 - 1)) / 4},
		// Proxies (1,0), (0,1): [2cos_other − 2cos_y + 1]₊ is non-zero only for sample 1: 2·√3/2.
		{"proxytriplet", "proxytriplet", Config{NumClasses: 2, Dim: 2},
			setProxies([2]float32{1, 0}, [2]float32{0, 1}), 2 * s3 / 4},
		{"softtriple", "softtriple", Config{NumClasses: 2, Dim: 2}, func(l Loss) {
			copy(l.Params()[0].Data, []float32{1, 0, -1, 0, 0, 1, 0, -1}) // rows k·C + c
		}, softTripleWant},
		// α = 1.2, m = 0.4: 𝒫* = {d > 0.8}: (0,1), (2,3); 𝒩* = {d < 1.2}: (1,2) only.
		// L_P: 0.2, 0.2, √2 − 0.8, √2 − 0.8; L_N: 0, 1.2 − d12, 1.2 − d12, 0 (one negative: weight 1).
		{"rankedlist", "rankedlist", Config{}, nil,
			(0.4 + 2*(1.2-d12) + 2*(sq2-0.8)) / 4},
	}
	cases = append(cases, moreRefCases...)
	for _, tc := range cases {
		got := refValue(t, tc.name, tc.cfg, tc.setup)
		if math.Abs(got-tc.want) > 1e-5*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: L = %.9g, want %.9g", tc.what, got, tc.want)
		} else {
			t.Logf("%s: L = %.9g (want %.9g)", tc.what, got, tc.want)
		}
	}
	// Every registered loss that trains without a teacher has a value.
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.name] = true
	}
	for _, info := range All() {
		if !covered[info.Name] && !info.Teacher && !strings.HasPrefix(info.Name, "mpn") && info.Name != "structclust" {
			t.Errorf("%s has no hand-computed reference value", info.Name)
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

// Hand-computed reference values for the ranking, proxy and clustering losses on refBatch (unit vectors at 0°, 60°,
// 90°, 180°, labels 0, 0, 1, 1; distances d01 = 1, d02 = √2, d03 = 2,
// d12 = 2 sin 15°, d13 = √3, d23 = √2; cosines S01 = ½, S02 = 0, S03 = −1,
// S12 = √3/2, S13 = −½, S23 = 0), plus independent loop implementations of
// RS@k and Smooth-AP on random batches.

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// TestQuadrupletSecondNegative: refBatch plus φ₄ = (0, −1) of class 2. With
// triplets (0,1,2) and (1,0,3) the only admissible l is 4: d(2,4) = 2,
// d(3,4) = √2; d(0,2) = √2, d(1,3) = √3. γ₂ = 1.5:
// L = ([1 − √2 + 1]₊ + [1 − √3 + 1]₊)/2 + ([1 − 2 + 1.5]₊ + [1 − √2 + 1.5]₊)/2.
func TestQuadrupletSecondNegative(t *testing.T) {
	b := refBatch()
	b.B, b.Emb, b.Labels = 5, append(b.Emb, 0, -1), append(b.Labels, 2)
	l := newLoss(t, "quadruplet", Config{Hyper: map[string]float64{"margin2": 1.5}})
	l.(interface{ setMiner(miners.Miner) }).setMiner(fixedMiner{miners.Triplets{A: []int32{0, 1}, P: []int32{1, 0}, N: []int32{2, 3}}})
	got, err := l.Forward(b, make([]float32, 10))
	if err != nil {
		t.Fatal(err)
	}
	want := (4-math.Sqrt2-math.Sqrt(3))/2 + (0.5+2.5-math.Sqrt2)/2
	if math.Abs(got-want) > 1e-6 {
		t.Fatalf("L = %.9g, want %.9g", got, want)
	}
}

// TestStructClustReference: unit vectors at 0°, 50°, 110°, 200°, labels
// 0, 0, 1, 1 (no distance ties). Greedy inference (γ = 1) first takes point 1
// (the best single facility), then point 3: assignment g = (0, 0, 0, 1),
// F(S) = −(d01 + d21) = −(2 sin 25° + 1), NMI(g, y) = MI/√(H(g)H(y)) with
// MI = ¼ln2 + ¼ln⅔ + ½ln(4/3), H(y) = ln 2, H(g) = −(¼ln¼ + ¾ln¾). PAM keeps
// both medoids. Oracle: F̃ = −(d01 + d23) = −(2 sin 25° + √2). Hence
// L = F(S) + 1 − NMI − F̃ = √2 − NMI. (Checked step by step with an
// independent Python evaluation of the same rules.)
func TestStructClustReference(t *testing.T) {
	b := Batch{B: 4, D: 2, Labels: []int{0, 0, 1, 1}}
	for _, deg := range []float64{0, 50, 110, 200} {
		r := deg * math.Pi / 180
		b.Emb = append(b.Emb, float32(math.Cos(r)), float32(math.Sin(r)))
	}
	mi := 0.25*math.Log(2) + 0.25*math.Log(2.0/3) + 0.5*math.Log(4.0/3)
	hg := -(0.25*math.Log(0.25) + 0.75*math.Log(0.75))
	nmiWant := mi / math.Sqrt(math.Log(2)*hg)
	if got := nmi([]int{0, 0, 0, 1}, 2, []int{0, 0, 1, 1}, 2); math.Abs(got-nmiWant) > 1e-12 {
		t.Fatalf("nmi = %v, want %v", got, nmiWant)
	}
	if got := nmi([]int{1, 1, 0, 0}, 2, []int{0, 0, 1, 1}, 2); math.Abs(got-1) > 1e-12 {
		t.Fatalf("nmi of a relabelled perfect clustering = %v, want 1", got)
	}
	if got := nmi([]int{0, 0, 0, 0}, 1, []int{0, 0, 1, 1}, 2); got != 0 {
		t.Fatalf("nmi of a single cluster = %v, want 0", got)
	}
	l := newLoss(t, "structclust", Config{})
	got, err := l.Forward(b, make([]float32, 8))
	if err != nil {
		t.Fatal(err)
	}
	// Distances carry √(… + 10⁻¹²) at zero: 1e-6 per point, well inside 1e-5.
	if want := math.Sqrt2 - nmiWant; math.Abs(got-want) > 1e-5 {
		t.Fatalf("L = %.9g, want %.9g", got, want)
	}
}

// batchCos returns the cosine matrix of the unit-normalised batch.
func batchCos(b Batch) []float64 {
	u := unitRows(b.Emb, b.B, b.D)
	return gram(u, b.B, u, b.B, b.D)
}

// rsNumerator is Σ_{x∈P_q} σ_{τ₁}(k − 1 − Σ_{z∉{q,x}} σ_{τ₂}(s_qz − s_qx)),
// written as plain loops (Patel et al. 2024 eq. 5 before the clip).
func rsNumerator(b Batch, q, k int, tau1, tau2 float64) float64 {
	S := batchCos(b)
	B := b.B
	v := 0.0
	for x := 0; x < B; x++ {
		if x == q || b.Labels[x] != b.Labels[q] {
			continue
		}
		rank := 0.0
		for z := 0; z < B; z++ {
			if z != q && z != x {
				rank += sigmoid((S[q*B+z] - S[q*B+x]) / tau2)
			}
		}
		v += sigmoid((float64(k) - 1 - rank) / tau1)
	}
	return v
}

// rsLoss and apLoss are loop implementations of RS@k (Patel et al. 2024 eqs. 5–7
// with the min(k, |P_q|) division and clip) and Smooth-AP.
func rsLoss(b Batch, ks []int, tau1, tau2 float64) float64 {
	L, nq := 0.0, 0
	for q := 0; q < b.B; q++ {
		np := 0
		for x := 0; x < b.B; x++ {
			if x != q && b.Labels[x] == b.Labels[q] {
				np++
			}
		}
		if np == 0 {
			continue
		}
		nq++
		for _, k := range ks {
			L += (1 - min(rsNumerator(b, q, k, tau1, tau2), float64(k))/float64(min(k, np))) / float64(len(ks))
		}
	}
	return L / float64(nq)
}

func apLoss(b Batch, tau float64) float64 {
	S := batchCos(b)
	B := b.B
	total, nq := 0.0, 0
	for q := 0; q < B; q++ {
		ap, np := 0.0, 0
		for x := 0; x < B; x++ {
			if x == q || b.Labels[x] != b.Labels[q] {
				continue
			}
			np++
			num, den := 1.0, 1.0
			for z := 0; z < B; z++ {
				if z == q || z == x {
					continue
				}
				g := sigmoid((S[q*B+z] - S[q*B+x]) / tau)
				den += g
				if b.Labels[z] == b.Labels[q] {
					num += g
				}
			}
			ap += num / den
		}
		if np > 0 {
			total += ap / float64(np)
			nq++
		}
	}
	return 1 - total/float64(nq)
}

// TestRankingLossesMatchLoops compares RS@k and Smooth-AP with the loop
// implementations on random batches with several positives per query,
// queries without positives, and the clip active.
func TestRankingLossesMatchLoops(t *testing.T) {
	for seed := int64(0); seed < 4; seed++ {
		b := randomBatch(seed, 13, 6, 3)
		b.Labels[12] = 7 // a query without positives
		for _, c := range []struct{ tau1, tau2 float64 }{{1, 0.01}, {5, 0.3}, {0.3, 0.05}} {
			l := newLoss(t, "recallk", Config{Hyper: map[string]float64{"tau1": c.tau1, "tau2": c.tau2, "k_max": 4}})
			got, err := l.Forward(b, make([]float32, b.B*b.D))
			if err != nil {
				t.Fatal(err)
			}
			if want := rsLoss(b, []int{1, 2, 4}, c.tau1, c.tau2); math.Abs(got-want) > 1e-9 {
				t.Errorf("seed %d τ %v: RS@k = %.12g, loops %.12g", seed, c, got, want)
			}
		}
		for _, tau := range []float64{0.01, 0.5} {
			l := newLoss(t, "smoothap", Config{Hyper: map[string]float64{"tau": tau}})
			got, err := l.Forward(b, make([]float32, b.B*b.D))
			if err != nil {
				t.Fatal(err)
			}
			if want := apLoss(b, tau); math.Abs(got-want) > 1e-9 {
				t.Errorf("seed %d τ %v: Smooth-AP = %.12g, loops %.12g", seed, tau, got, want)
			}
		}
	}
}

// TestNoPairs: batches without positives (all labels distinct) or
// without negatives (one label) give L = 0 and a zero gradient for the
// label-driven losses (genlifted and SNR keep their regularisers; the ranked
// list loss has terms for positives alone and for negatives alone).
func TestNoPairs(t *testing.T) {
	distinct := randomBatch(3, 6, 4, 6)
	single := randomBatch(4, 6, 4, 1)
	for _, name := range []string{"histogram", "lifted", "prototypical", "structclust", "recallk", "smoothap", "quadruplet"} {
		for what, b := range map[string]Batch{"distinct": distinct, "single": single} {
			if (name == "recallk" || name == "smoothap") && what == "single" {
				continue // all-positive lists are valid (and trivially ranked)
			}
			b.Rng = rand.New(rand.NewSource(1))
			l := newLoss(t, name, Config{})
			g := make([]float32, 24)
			for i := range g {
				g[i] = 1
			}
			v, err := l.Forward(b, g)
			if err != nil || v != 0 {
				t.Fatalf("%s %s: L = %v, err %v; want 0, nil", name, what, v, err)
			}
			for _, x := range g {
				if x != 0 {
					t.Fatalf("%s %s: non-zero gradient", name, what)
				}
			}
		}
	}
}

// TestBadHyper: invalid hyper-parameters and configurations are errors.
func TestBadHyper(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"histogram", Config{Hyper: map[string]float64{"bins": 1}}},
		{"histogram", Config{Hyper: map[string]float64{"bins": 6.5}}},
		{"histogram", Config{Miner: "distance"}},
		{"angular", Config{Hyper: map[string]float64{"alpha": 2}}},
		{"angular", Config{Hyper: map[string]float64{"lambda": -1}}},
		{"genlifted", Config{Hyper: map[string]float64{"nu": -1}}},
		{"genlifted", Config{Hyper: map[string]float64{"margin": math.NaN()}}},
		{"quadruplet", Config{Hyper: map[string]float64{"margin2": 0}}},
		{"quadruplet", Config{Miner: "nope"}},
		{"snr", Config{Hyper: map[string]float64{"lambda": -0.1}}},
		{"softtriple", Config{NumClasses: 1, Dim: 4}},
		{"softtriple", Config{NumClasses: 4}},
		{"softtriple", Config{NumClasses: 4, Dim: 4, Hyper: map[string]float64{"centers": 0}}},
		{"softtriple", Config{NumClasses: 4, Dim: 4, Hyper: map[string]float64{"gamma": 0}}},
		{"lifted", Config{Hyper: map[string]float64{"margin": math.Inf(1)}}},
		{"proxytriplet", Config{NumClasses: 4}},
		{"prototypical", Config{Hyper: map[string]float64{"support": 1}}},
		{"rankedlist", Config{Hyper: map[string]float64{"margin": 2}}},
		{"structclust", Config{Hyper: map[string]float64{"pam_iters": -1}}},
		{"recallk", Config{Hyper: map[string]float64{"tau2": 0}}},
		{"recallk", Config{Hyper: map[string]float64{"k_max": -1}}},
		{"smoothap", Config{Hyper: map[string]float64{"tau": -1}}},
	} {
		if _, err := New(c.name, c.cfg); err == nil {
			t.Errorf("New(%s, %+v): no error", c.name, c.cfg)
		}
	}
	// Labels outside the centre set and a wrong D are errors for SoftTriple.
	l := newLoss(t, "softtriple", Config{NumClasses: 3, Dim: 5})
	b := randomBatch(1, 8, 5, 3)
	b.Labels[0] = 3
	if _, err := l.Forward(b, make([]float32, 40)); err == nil {
		t.Error("softtriple: label ≥ NumClasses accepted")
	}
	b = randomBatch(1, 10, 4, 3)
	if _, err := l.Forward(b, make([]float32, 40)); err == nil {
		t.Error("softtriple: wrong D accepted")
	}
}

// TestParams pins the learnable parameters: SoftTriple's K·C centres at
// the absolute rate 1e-5 (Roth et al. 2020), proxy-triplet's C proxies at the base
// rate; every registered loss without proxies, centres or a learnt margin
// has none.
func TestParams(t *testing.T) {
	p := newLoss(t, "softtriple", Config{NumClasses: 5, Dim: 4}).Params()
	if len(p) != 1 || p[0].LR != 1e-5 || !p[0].NoDecay || len(p[0].Data) != 2*5*4 || p[0].Shape[0] != 10 {
		t.Errorf("softtriple params %+v", p)
	}
	p = newLoss(t, "proxytriplet", Config{NumClasses: 5, Dim: 4}).Params()
	if len(p) != 1 || p[0].LR != 0 || p[0].LRScale != 1 || len(p[0].Data) != 20 {
		t.Errorf("proxytriplet params %+v", p)
	}
	withParams := map[string]bool{"margin": true, "arcface": true, "normsoftmax": true, "proxynca": true, "softtriple": true, "proxytriplet": true}
	for _, info := range All() {
		if withParams[info.Name] || info.Teacher || strings.HasPrefix(info.Name, "mpn") {
			continue
		}
		if p := newLoss(t, info.Name, Config{}).Params(); len(p) != 0 {
			t.Errorf("%s has %d params, want none", info.Name, len(p))
		}
	}
}
