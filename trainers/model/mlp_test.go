package model

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// refForward is an independent float64 implementation of the MLP forward
// pass, reading the parameters in the order NewMLP creates them.
func refForward(m *MLP, x []float32, rows int) []float64 {
	c := m.cfg
	h := make([]float64, rows*c.InDim)
	for i := range h {
		h[i] = float64(x[i])
	}
	in := c.InDim
	p := m.params
	k := 0
	lin := func(h []float64, in, out int) []float64 {
		w, b := p[k].Data, p[k+1].Data
		k += 2
		z := make([]float64, rows*out)
		for r := 0; r < rows; r++ {
			for j := 0; j < out; j++ {
				s := float64(b[j])
				for t := 0; t < in; t++ {
					s += h[r*in+t] * float64(w[t*out+j])
				}
				z[r*out+j] = s
			}
		}
		return z
	}
	for _, width := range c.Hidden {
		z := lin(h, in, width)
		if c.Norm == "layer" {
			gm, bt := p[k].Data, p[k+1].Data
			k += 2
			for r := 0; r < rows; r++ {
				row := z[r*width : (r+1)*width]
				var mu, v float64
				for _, a := range row {
					mu += a
				}
				mu /= float64(width)
				for _, a := range row {
					v += (a - mu) * (a - mu)
				}
				v /= float64(width)
				for j := range row {
					row[j] = (row[j]-mu)/math.Sqrt(v+layerNormEps)*float64(gm[j]) + float64(bt[j])
				}
			}
		}
		for i := range z {
			z[i] = math.Max(z[i], 0)
		}
		h, in = z, width
	}
	e := lin(h, in, c.EmbedDim)
	if c.L2Normalize {
		D := c.EmbedDim
		for r := 0; r < rows; r++ {
			var s float64
			for _, a := range e[r*D : (r+1)*D] {
				s += a * a
			}
			s = math.Sqrt(s + l2Eps)
			for j := r * D; j < (r+1)*D; j++ {
				e[j] /= s
			}
		}
	}
	return e
}

func newTestMLP(t testing.TB, c Config) *MLP {
	t.Helper()
	m, err := NewMLP(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

var testConfigs = []Config{
	{InDim: 7, Hidden: []int{9}, EmbedDim: 5, Chunk: 6, Seed: 1},
	{InDim: 7, Hidden: []int{9, 8}, EmbedDim: 5, Chunk: 6, Norm: "layer", L2Normalize: true, Seed: 2},
	{InDim: 4, EmbedDim: 3, Chunk: 4, L2Normalize: true, Seed: 3},
}

func TestForwardMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for ci, c := range testConfigs {
		m := newTestMLP(t, c)
		ref := func(x []float32, rows int) []float64 { return refForward(m, x, rows) }
		checkForwardReference(t, ci, m, ref, rng, c.Chunk, 3) // a full chunk and a shorter pass
	}
}

// TestGradientFiniteDifference checks ∂(Σ E⊙G)/∂θ from Backward against
// central differences of the independent float64 reference forward pass, for
// every parameter entry, on a pass shorter than the chunk.
func TestGradientFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for ci, c := range testConfigs {
		m := newTestMLP(t, c)
		s := backwardSurrogate(t, m, func(x []float32, rows int) []float64 { return refForward(m, x, rows) }, rng)
		const h = 1e-3
		for _, p := range m.params {
			for i := range p.Data {
				old := p.Data[i]
				p.Data[i] = old + h
				up := s()
				p.Data[i] = old - h
				dn := s()
				p.Data[i] = old
				fd := (up - dn) / float64(float32(old+h)-float32(old-h))
				if math.Abs(fd-float64(p.Grad[i])) > 2e-3*(1+math.Abs(fd)) {
					t.Errorf("config %d: d/d%s[%d]: backward %v, finite difference %v", ci, p.Name, i, p.Grad[i], fd)
				}
			}
		}
	}
}

// TestChunkedBackwardAccumulates checks the multistage identity: the gradient
// of a batch equals the sum of the gradients of its chunks.
func TestChunkedBackwardAccumulates(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	c := Config{InDim: 6, Hidden: []int{8}, EmbedDim: 4, Chunk: 10, Norm: "layer", L2Normalize: true, Seed: 9}
	whole := newTestMLP(t, c)
	c.Chunk = 3
	chunked := newTestMLP(t, c)
	checkChunkedBackward(t, rng, whole, chunked, 10)
}

func TestDeterministicInitAndInPlaceUpdate(t *testing.T) {
	c := Config{InDim: 5, Hidden: []int{6}, EmbedDim: 4, Chunk: 4, Seed: 42}
	a, b := newTestMLP(t, c), newTestMLP(t, c)
	for k := range a.params {
		for i := range a.params[k].Data {
			if a.params[k].Data[i] != b.params[k].Data[i] {
				t.Fatalf("same seed, different init of %s", a.params[k].Name)
			}
		}
	}
	c.Seed = 43
	d := newTestMLP(t, c)
	if d.params[0].Data[0] == a.params[0].Data[0] {
		t.Fatal("different seeds gave the same first weight")
	}
	// Updating Param.Data in place must change the next forward pass.
	x := mat32.Matrix{Rows: 2, Cols: 5, Data: randVec(rand.New(rand.NewSource(1)), 10)}
	e1, err := Embed(a, x)
	if err != nil {
		t.Fatal(err)
	}
	a.params[len(a.params)-1].Data[0] += 1 // output bias of dim 0
	e2, err := Embed(a, x)
	if err != nil {
		t.Fatal(err)
	}
	if d := e2.Data[0] - e1.Data[0]; math.Abs(float64(d)-1) > 1e-5 {
		t.Fatalf("bias update moved E[0] by %v, want 1", d)
	}
}

func TestEmbedChunksAndErrors(t *testing.T) {
	c := Config{InDim: 3, Hidden: []int{4}, EmbedDim: 2, Chunk: 4, Seed: 1}
	m := newTestMLP(t, c)
	x := mat32.Matrix{Rows: 10, Cols: 3, Data: randVec(rand.New(rand.NewSource(2)), 30)}
	e, err := Embed(m, x)
	if err != nil {
		t.Fatal(err)
	}
	want := refForward(m, x.Data, 10)
	for i := range want {
		if math.Abs(float64(e.Data[i])-want[i]) > 1e-4 {
			t.Fatalf("E[%d] = %v, want %v", i, e.Data[i], want[i])
		}
	}
	if _, err := Embed(m, mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{1, 2}}); err == nil {
		t.Fatal("wrong width accepted")
	}
	if err := m.Forward(x.Data, 5, make([]float32, 10)); err == nil {
		t.Fatal("rows > chunk accepted")
	}
	for _, bad := range []Config{{InDim: 0}, {InDim: 3, Norm: "batch"}, {InDim: 3, Hidden: []int{0}}, {InDim: 3, Arch: "cnn9"}} {
		if _, err := New(bad); err == nil {
			t.Errorf("config %+v accepted", bad)
		}
	}
}

// TestLayerNormGradientNonUnitGamma repeats the finite-difference check
// with random LayerNorm γ and β (they start at 1 and 0, which would hide a
// missing γ factor in ∂/∂z).
func TestLayerNormGradientNonUnitGamma(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	c := Config{InDim: 6, Hidden: []int{7}, EmbedDim: 4, Chunk: 5, Norm: "layer", L2Normalize: true, Seed: 4}
	m := newTestMLP(t, c)
	for _, p := range m.params {
		if strings.Contains(p.Name, "ln_") {
			for i := range p.Data {
				p.Data[i] = float32(0.5 + rng.Float64())
			}
		}
	}
	s := backwardSurrogate(t, m, func(x []float32, rows int) []float64 { return refForward(m, x, rows) }, rng)
	const h = 1e-3
	for _, p := range m.params {
		for i := range p.Data {
			old := p.Data[i]
			p.Data[i] = old + h
			up := s()
			p.Data[i] = old - h
			dn := s()
			p.Data[i] = old
			fd := (up - dn) / float64(float32(old+h)-float32(old-h))
			if math.Abs(fd-float64(p.Grad[i])) > 2e-3*(1+math.Abs(fd)) {
				t.Errorf("d/d%s[%d]: backward %v, finite difference %v", p.Name, i, p.Grad[i], fd)
			}
		}
	}
}
