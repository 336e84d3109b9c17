package model

import (
	"math"
	"math/rand"
	"testing"
)

// Test helpers shared by the architectures' tests (mlp_test.go, cnn_test.go).

// refFunc is an independent float64 forward pass of a model: E for rows
// input rows x, reading the model's current parameters.
type refFunc func(x []float32, rows int) []float64

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// perturbParams adds 0.1·N(0, 1) to every parameter entry, so that biases
// and LayerNorm γ/β (zero or one at initialisation) are exercised.
func perturbParams(rng *rand.Rand, m Model) {
	for _, p := range m.Params() {
		for i := range p.Data {
			p.Data[i] += 0.1 * float32(rng.NormFloat64())
		}
	}
}

// checkForwardReference perturbs m's parameters and compares Forward with
// the reference ref on random inputs of each row count (config ci names
// the model in failures).
func checkForwardReference(t *testing.T, ci int, m Model, ref refFunc, rng *rand.Rand, rowCounts ...int) {
	t.Helper()
	perturbParams(rng, m)
	for _, rows := range rowCounts {
		x := randVec(rng, rows*m.InDim())
		out := make([]float32, rows*m.OutDim())
		if err := m.Forward(x, rows, out); err != nil {
			t.Fatal(err)
		}
		want := ref(x, rows)
		for i := range want {
			if math.Abs(float64(out[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
				t.Fatalf("config %d rows %d: E[%d] = %v, reference %v", ci, rows, i, out[i], want[i])
			}
		}
	}
}

// backwardSurrogate prepares a finite-difference check: it perturbs m's
// parameters, draws Chunk−1 input rows x (a pass shorter than the chunk) and G,
// sets every Param.Grad to Backward's ∂(Σ E⊙G)/∂θ and returns the
// reference surrogate S(θ) = Σ ref(x)⊙G at the current parameters.
func backwardSurrogate(t *testing.T, m Model, ref refFunc, rng *rand.Rand) func() float64 {
	t.Helper()
	perturbParams(rng, m)
	rows := m.Chunk() - 1
	x := randVec(rng, rows*m.InDim())
	g := randVec(rng, rows*m.OutDim())
	for _, p := range m.Params() {
		clear(p.Grad)
	}
	if err := m.Backward(x, g, rows); err != nil {
		t.Fatal(err)
	}
	return func() float64 {
		e := ref(x, rows)
		var v float64
		for i := range e {
			v += e[i] * float64(g[i])
		}
		return v
	}
}

// checkChunkedBackward checks the multistage identity: the gradient of a
// batch of rows (Backward of whole, one pass) equals the sum of the
// gradients of its chunks (Backward of chunked, chunked.Chunk() rows at a
// time). The two models must have the same parameters.
func checkChunkedBackward(t *testing.T, rng *rand.Rand, whole, chunked Model, rows int) {
	t.Helper()
	in, d, step := whole.InDim(), whole.OutDim(), chunked.Chunk()
	x := randVec(rng, rows*in)
	g := randVec(rng, rows*d)
	if err := whole.Backward(x, g, rows); err != nil {
		t.Fatal(err)
	}
	for s := 0; s < rows; s += step {
		n := min(step, rows-s)
		if err := chunked.Backward(x[s*in:(s+n)*in], g[s*d:(s+n)*d], n); err != nil {
			t.Fatal(err)
		}
	}
	for k, p := range whole.Params() {
		q := chunked.Params()[k]
		for i := range p.Grad {
			if math.Abs(float64(p.Grad[i]-q.Grad[i])) > 1e-4*(1+math.Abs(float64(p.Grad[i]))) {
				t.Fatalf("%s[%d]: whole %v, chunked %v", p.Name, i, p.Grad[i], q.Grad[i])
			}
		}
	}
}

// TestBackwardKeptMatchesBackward checks the one-forward path: Forward
// then BackwardKept gives the same gradients, bit for bit, as Backward
// (which forwards again), for both architectures; and BackwardKept refuses
// a row count other than the latest Forward's.
func TestBackwardKeptMatchesBackward(t *testing.T) {
	for _, c := range []Config{
		{InDim: 20, Hidden: []int{16}, Norm: "layer", EmbedDim: 8, L2Normalize: true, Chunk: 6, Seed: 1},
		{Arch: "cnn", InDim: 64, InChannels: 1, InHeight: 8, InWidth: 8, Channels: []int{3, 4}, EmbedDim: 5, L2Normalize: true, Chunk: 4, Seed: 2},
	} {
		a, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(c)
		rng := rand.New(rand.NewSource(3))
		rows := c.Chunk - 1
		x := randVec(rng, rows*a.InDim())
		g := randVec(rng, rows*a.OutDim())
		if err := a.BackwardKept(g, rows); err == nil {
			t.Errorf("%s: BackwardKept before any Forward: no error", c.Arch)
		}
		out := make([]float32, rows*a.OutDim())
		if err := a.Forward(x, rows, out); err != nil {
			t.Fatal(err)
		}
		if err := a.BackwardKept(g, rows-1); err == nil {
			t.Errorf("%s: BackwardKept of %d rows after a Forward of %d: no error", c.Arch, rows-1, rows)
		}
		if err := a.BackwardKept(g, rows); err != nil {
			t.Fatal(err)
		}
		if err := b.Backward(x, g, rows); err != nil {
			t.Fatal(err)
		}
		for k, p := range a.Params() {
			for i, v := range p.Grad {
				if w := b.Params()[k].Grad[i]; math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("%s %s[%d]: BackwardKept %v, Backward %v", c.Arch, p.Name, i, v, w)
				}
			}
		}
	}
}
