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

// refValue evaluates the loss name on batch (refBatch when nil) with the
// triplets refTriplets.
func refValue(t *testing.T, name string, c Config, setup func(Loss), batch func() Batch) float64 {
	t.Helper()
	l := newLoss(t, name, c)
	if tl, ok := l.(interface{ setMiner(miners.Miner) }); ok {
		tl.setMiner(fixedMiner{refTriplets})
	}
	if setup != nil {
		setup(l)
	}
	if batch == nil {
		batch = refBatch
	}
	b := batch()
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

// refCase is one TestReferenceValues case: the loss configured by cfg and
// set up (parameters written) by setup must give want, worked out by hand.
type refCase struct {
	what  string
	cfg   Config
	setup func(Loss)
	want  float64
}

// Facts of refBatch used by the hand-worked values.
const (
	s3  = 0.8660254037844386 // √3/2 = S12
	d12 = 0.5176380902050415 // 2 sin 15°
)

// refRanks are the Smooth-AP / RS@k soft ranks on refBatch at τ = 0.01: each
// query has one positive x; r_q = Σ_{z≠q,x} σ((s_qz − s_qx)/0.01).
func refRanks() []float64 {
	return []float64{
		sigmoid(-50) + sigmoid(-150),          // q0: x=1 (½); z=2 (0), z=3 (−1)
		sigmoid(100*(s3-0.5)) + sigmoid(-100), // q1: x=0 (½); z=2 (√3/2), z=3 (−½)
		0.5 + sigmoid(100*s3),                 // q2: x=3 (0); z=0 (0, a tie), z=1 (√3/2)
		sigmoid(-100) + sigmoid(-50),          // q3: x=2 (0); z=0 (−1), z=1 (−½)
	}
}

// TestReferenceValues checks every loss's refCases.
func TestReferenceValues(t *testing.T) {
	for _, name := range caseNames() {
		c := casesOf[name]
		for _, tc := range c.ref {
			got := refValue(t, name, tc.cfg, tc.setup, c.refBatch)
			if math.Abs(got-tc.want) > 1e-5*math.Max(1, math.Abs(tc.want)) {
				t.Errorf("%s: L = %.9g, want %.9g", tc.what, got, tc.want)
			} else {
				t.Logf("%s: L = %.9g (want %.9g)", tc.what, got, tc.want)
			}
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
	if _, err := New("nope", Config{}); err == nil {
		t.Error("New(nope): no error")
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

// sigmoid is the logistic function.
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// batchCos returns the cosine matrix of the unit-normalised batch.
func batchCos(b Batch) []float64 {
	u := unitRows(b.Emb, b.B, b.D)
	return gram(u, b.B, u, b.B, b.D)
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

// TestBadHyper: the invalid hyper-parameters and configurations of each
// loss's test file are errors.
func TestBadHyper(t *testing.T) {
	for _, name := range caseNames() {
		for _, c := range casesOf[name].bad {
			if _, err := New(name, c); err == nil {
				t.Errorf("New(%s, %+v): no error", name, c)
			}
		}
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
		if withParams[info.Name] || casesOf[info.Name].ownTests {
			continue
		}
		if p := newLoss(t, info.Name, Config{}).Params(); len(p) != 0 {
			t.Errorf("%s has %d params, want none", info.Name, len(p))
		}
	}
}
