package losses

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// TestMPNGradients checks dL/dE and dL/dθ of every MPN and classifier
// parameter of mpn-ce by central finite differences: one step / two heads
// (the defaults, with dropout masks held fixed by the seeded rng), and two
// steps / three heads with D = 5 not a multiple of H.
func TestMPNGradients(t *testing.T) {
	const B, D, C = 8, 5, 3
	cases := []map[string]float64{
		{"ffn": 2},
		{"steps": 2, "heads": 3, "ffn": 1, "dropout": 0, "smoothing": 0, "temperature": 0.5},
		{"backbone_weight": 0, "dropout": 0.3, "ffn": 1},
	}
	for ci, h := range cases {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			l := newLoss(t, "mpn-ce", Config{NumClasses: C, Dim: D, Seed: 7, Hyper: h})
			// Larger classifier weights than the N(0, 0.001²) start so the
			// MPN parameters get gradients well above the FD noise.
			for _, p := range l.Params() {
				if p.Name == "mpn.cls.W" || p.Name == "mpn.backbone.W" {
					for i := range p.Data {
						p.Data[i] = float32(math.Sin(float64(3*i+ci))) * 2
					}
				}
			}
			// Batch seeds chosen so that no ReLU input lies within the FD step
			// of its kink.
			gradCheck(t, l, randomBatch([]int64{41, 32, 33}[ci], B, D, C), 5)
		})
	}
}

// TestMPNReference pins L for a fixed batch and parameter set, so a change of
// the forward maths is noticed (value computed by this implementation and
// cross-checked against the closed form for a zero classifier: with W_c = 0
// and W_b = 0 every logit is 0 and L = (1 + λ)·log C).
func TestMPNReference(t *testing.T) {
	l := newLoss(t, "mpn-ce", Config{NumClasses: 4, Dim: 6, Seed: 1, Hyper: map[string]float64{"dropout": 0}})
	for _, p := range l.Params() {
		if p.Name == "mpn.cls.W" || p.Name == "mpn.backbone.W" {
			clear(p.Data)
		}
	}
	got := lossAt(t, l, randomBatch(2, 8, 6, 4), 1)
	if want := 2 * math.Log(4); math.Abs(got-want) > 1e-9 {
		t.Fatalf("zero classifier: L = %.12g, want 2·log 4 = %.12g", got, want)
	}
}

// TestMPNRefineMatchesTrainingGraph: the inference graph (no dropout) gives
// the unit-normalised h^L of the training graph, and every row depends on the
// other rows of the batch (messages are exchanged).
func TestMPNRefine(t *testing.T) {
	l := newLoss(t, "mpn-ce", Config{NumClasses: 3, Dim: 6, Seed: 2, Hyper: map[string]float64{"dropout": 0.5}})
	r, ok := l.(Refiner)
	if !ok {
		t.Fatal("mpn-ce does not implement Refiner")
	}
	b := randomBatch(3, 5, 6, 3)
	out := make([]float32, 30)
	if err := r.Refine(b.Emb, 5, 6, out); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		n := 0.0
		for _, v := range out[i*6 : (i+1)*6] {
			n += float64(v) * float64(v)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("row %d has squared norm %v", i, n)
		}
	}
	// Perturb row 4: row 0's refined feature must change.
	emb2 := append([]float32(nil), b.Emb...)
	for k := 0; k < 6; k++ {
		emb2[4*6+k] += 0.5
	}
	out2 := make([]float32, 30)
	if err := r.Refine(emb2, 5, 6, out2); err != nil {
		t.Fatal(err)
	}
	diff := 0.0
	for k := 0; k < 6; k++ {
		diff += math.Abs(float64(out[k] - out2[k]))
	}
	if diff < 1e-4 {
		t.Errorf("row 0 did not change when row 4 did (Σ|Δ| = %g): no message passing", diff)
	}
	// Same input twice → identical output (no dropout at test time).
	if err := r.Refine(b.Emb, 5, 6, out2); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if out[i] != out2[i] {
			t.Fatalf("refine is not deterministic at %d: %v vs %v", i, out[i], out2[i])
		}
	}
}

// TestMPNTrains: the backbone trained through the MPN improves held-out
// backbone-only R@1 on the synthetic open-set data.
func TestMPNTrains(t *testing.T) {
	start := time.Now()
	before, after := trainRecall(t, "mpn-ce", 0.05, 250)
	t.Logf("mpn-ce: held-out backbone R@1 %.3f → %.3f (%v)", before, after, time.Since(start).Round(time.Millisecond))
	if after < before+0.3 {
		t.Errorf("mpn-ce did not train the backbone: R@1 %.3f → %.3f", before, after)
	}
}

// TestMPNTrainsThroughMPNAlone: with the backbone cross-entropy switched off
// (backbone_weight = 0) the backbone still learns, from dL/dE that reaches
// it only through the message passing network.
func TestMPNTrainsThroughMPNAlone(t *testing.T) {
	const name = "mpn-ce-test-mpn-only"
	mpn, _ := Lookup("mpn-ce")
	Register(Info{Name: name, Hyper: mpn.Hyper, Sphere: true, New: func(c Config) (Loss, error) {
		c.Hyper["backbone_weight"] = 0 // New hands over a copy with the defaults filled
		return newMPNCE(c)
	}})
	defer reg.Remove(name)
	before, after := trainRecall(t, name, 0.05, 250)
	t.Logf("mpn-ce, backbone_weight 0: held-out backbone R@1 %.3f → %.3f", before, after)
	if after < before+0.3 {
		t.Errorf("backbone did not train through the MPN: R@1 %.3f → %.3f", before, after)
	}
}

// newDistill builds mpn-distill with hyper h and an mpn-ce teacher over
// random teacher-backbone embeddings of 20 training rows, rows 3, 4, … set.
func newDistill(t *testing.T, B, D, C int, h map[string]float64) Loss {
	t.Helper()
	teacher := newLoss(t, "mpn-ce", Config{NumClasses: C, Dim: D, Seed: 5})
	for _, p := range teacher.Params() {
		if p.Name == "mpn.cls.W" {
			for i := range p.Data {
				p.Data[i] = float32(math.Cos(float64(i))) // confident, varied teacher logits
			}
		}
	}
	l := newLoss(t, "mpn-distill", Config{NumClasses: C, Dim: D, Seed: 6, Hyper: h})
	tb := randomBatch(77, 20, D, C)
	d := l.(Distiller)
	if err := d.SetTeacher(teacher.(Teacher), tb.Emb, 20, D); err != nil {
		t.Fatal(err)
	}
	rows := make([]int, B)
	for i := range rows {
		rows[i] = (3 + 2*i) % 20
	}
	d.SetRows(rows)
	return l
}

// TestDistillGradients checks each teacher-student term (Seidenschwarz et al. 2021 §3.4) and
// their sum by finite differences, the student classifier included.
func TestDistillGradients(t *testing.T) {
	const B, D, C = 8, 5, 3
	for ci, h := range []map[string]float64{
		{"kd": 1, "kd_temperature": 2},
		{"kd": 0, "imitation": 1, "huber_delta": 0.1}, // δ small: both Huber branches
		{"kd": 0, "relational": 1, "huber_delta": 0.5},
		{"kd": 0.5, "imitation": 2, "relational": 1},
	} {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			l := newDistill(t, B, D, C, h)
			gradCheck(t, l, randomBatch(int64(51+ci), B, D, C), 1)
		})
	}
}

// TestDistillReference: a student whose embeddings are the teacher's own MPN
// features costs exactly 0 under imitation and relational distillation;
// without a teacher Forward fails with a pointer to --teacher.
func TestDistillReference(t *testing.T) {
	const B, D, C = 6, 4, 3
	l := newDistill(t, B, D, C, map[string]float64{"kd": 0, "imitation": 1, "relational": 1})
	md := l.(*mpnDistill)
	// Student embeddings = the teacher's unit MPN features of the same rows.
	emb, feats, logits := make([]float32, B*D), make([]float32, B*D), make([]float32, B*C)
	for j, r := range md.rows {
		copy(emb[j*D:(j+1)*D], md.tEmb[r*D:(r+1)*D])
	}
	if err := md.teacher.Teach(emb, B, D, feats, logits); err != nil {
		t.Fatal(err)
	}
	b := Batch{Emb: feats, Labels: []int{0, 1, 2, 0, 1, 2}, B: B, D: D}
	if v := lossAt(t, l, b, 1); math.Abs(v) > 1e-9 {
		t.Errorf("student = teacher features: L = %g, want 0", v)
	}
	bare := newLoss(t, "mpn-distill", Config{NumClasses: C, Dim: D})
	if _, err := bare.Forward(b, make([]float32, B*D)); err == nil || !strings.Contains(err.Error(), "--teacher") {
		t.Errorf("no teacher: error %v", err)
	}
}
