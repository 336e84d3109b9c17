package model

import (
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/trainers/param"
)

// refCNNForward is an independent float64 implementation of the CNN forward
// pass (direct 3×3 convolution with zero padding 1, ReLU, 2×2 max-pool,
// channels-first flatten, linear, L2), reading the parameters in the order
// NewCNN creates them.
func refCNNForward(m *CNN, x []float32, rows int) []float64 {
	c := m.cfg
	p := m.params
	D := c.EmbedDim
	out := make([]float64, rows*D)
	for r := 0; r < rows; r++ {
		C, H, W := c.InChannels, c.InHeight, c.InWidth
		h := make([]float64, C*H*W)
		for i := range h {
			h[i] = float64(x[r*c.InDim+i])
		}
		for l, co := range c.Channels {
			w, b := p[2*l].Data, p[2*l+1].Data
			z := make([]float64, co*H*W)
			for o := 0; o < co; o++ {
				for y := 0; y < H; y++ {
					for xx := 0; xx < W; xx++ {
						s := float64(b[o])
						for ci := 0; ci < C; ci++ {
							for ky := 0; ky < 3; ky++ {
								for kx := 0; kx < 3; kx++ {
									yy, xs := y+ky-1, xx+kx-1
									if yy < 0 || yy >= H || xs < 0 || xs >= W {
										continue
									}
									s += h[(ci*H+yy)*W+xs] * float64(w[(ci*9+ky*3+kx)*co+o])
								}
							}
						}
						z[(o*H+y)*W+xx] = math.Max(s, 0)
					}
				}
			}
			H2, W2 := H/2, W/2
			h = make([]float64, co*H2*W2)
			for o := 0; o < co; o++ {
				for y := 0; y < H2; y++ {
					for xx := 0; xx < W2; xx++ {
						v := math.Inf(-1)
						for dy := 0; dy < 2; dy++ {
							for dx := 0; dx < 2; dx++ {
								v = math.Max(v, z[(o*H+2*y+dy)*W+2*xx+dx])
							}
						}
						h[(o*H2+y)*W2+xx] = v
					}
				}
			}
			C, H, W = co, H2, W2
		}
		k := 2 * len(c.Channels)
		w, b := p[k].Data, p[k+1].Data
		e := out[r*D : (r+1)*D]
		for j := 0; j < D; j++ {
			s := float64(b[j])
			for t, v := range h {
				s += v * float64(w[t*D+j])
			}
			e[j] = s
		}
		if c.L2Normalize {
			var ss float64
			for _, v := range e {
				ss += v * v
			}
			ss = math.Sqrt(ss + l2Eps)
			for j := range e {
				e[j] /= ss
			}
		}
	}
	return out
}

func newTestCNN(t testing.TB, c Config) *CNN {
	t.Helper()
	m, err := NewCNN(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

var cnnTestConfigs = []Config{
	{Arch: "cnn", InDim: 36, InChannels: 1, InHeight: 6, InWidth: 6, Channels: []int{3, 4}, EmbedDim: 5, Chunk: 4, Seed: 1},
	{Arch: "cnn", InDim: 2 * 5 * 7, InChannels: 2, InHeight: 5, InWidth: 7, Channels: []int{3}, EmbedDim: 4, Chunk: 3, L2Normalize: true, Seed: 2},
	{Arch: "cnn", InDim: 64, InChannels: 1, InHeight: 8, InWidth: 8, Channels: []int{2, 3, 2}, EmbedDim: 3, Chunk: 3, L2Normalize: true, Seed: 3},
	// 16 input channels, the weight gradient packs runs of channels
	// (im2colRows): in the second block (channels-first maps) and in the
	// first (the NCHW input)
	{Arch: "cnn", InDim: 6 * 5, InChannels: 1, InHeight: 6, InWidth: 5, Channels: []int{16, 2}, EmbedDim: 3, Chunk: 3, Seed: 4},
	{Arch: "cnn", InDim: 16 * 5 * 4, InChannels: 16, InHeight: 5, InWidth: 4, Channels: []int{2}, EmbedDim: 3, Chunk: 3, L2Normalize: true, Seed: 5},
}

// TestCNNHandChecked runs a 1×4×4 image through one block with weights set
// by hand: an identity kernel (centre tap 1) and bias 0.5 keep the image,
// ReLU clips, the 2×2 pool takes the block maxima, and an identity output
// layer exposes the 1×2×2 pooled map.
func TestCNNHandChecked(t *testing.T) {
	c := Config{Arch: "cnn", InDim: 16, InChannels: 1, InHeight: 4, InWidth: 4, Channels: []int{1}, EmbedDim: 4, Chunk: 2, Seed: 1}
	mod, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	m := mod.(*CNN)
	p := m.Params()
	if len(p) != 4 || len(p[0].Data) != 9 || len(p[1].Data) != 1 || len(p[2].Data) != 4*4 || len(p[3].Data) != 4 {
		t.Fatalf("parameter shapes: %v %v %v %v", p[0].Shape, p[1].Shape, p[2].Shape, p[3].Shape)
	}
	for _, q := range p {
		clear(q.Data)
	}
	p[0].Data[4] = 1   // centre tap
	p[1].Data[0] = 0.5 // conv bias
	for j := 0; j < 4; j++ {
		p[2].Data[j*4+j] = 1 // identity output layer
	}
	p[3].Data[3] = 10 // output bias on dim 3
	x := []float32{
		1, -2, 3, 0,
		-4, -5, -1, -1,
		-9, -1, 2, 7,
		0, -3, 4, 1,
		// second row: all −1 → pooled bias −0.5 → ReLU 0
		-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	}
	out := make([]float32, 8)
	if err := m.Forward(x, 2, out); err != nil {
		t.Fatal(err)
	}
	// block maxima + 0.5: {1.5, 3.5, 0.5, 7.5}; ReLU keeps them; dim 3 +10.
	want := []float32{1.5, 3.5, 0.5, 17.5, 0, 0, 0, 10}
	for i := range want {
		if math.Abs(float64(out[i]-want[i])) > 1e-6 {
			t.Fatalf("E = %v, want %v", out, want)
		}
	}
	// A 3×3 kernel that sums the neighbourhood: the top-left output of the
	// ones image is 4 (corner, zero padding), the centre 9.
	for i := range p[0].Data {
		p[0].Data[i] = 1
	}
	p[1].Data[0], p[3].Data[3] = 0, 0
	ones := make([]float32, 16)
	for i := range ones {
		ones[i] = 1
	}
	if err := m.Forward(ones, 1, out); err != nil {
		t.Fatal(err)
	}
	// pooled maxima of the 4×4 neighbourhood-sum map
	// [4 6 6 4; 6 9 9 6; 6 9 9 6; 4 6 6 4] are all 9.
	for j := 0; j < 4; j++ {
		if out[j] != 9 {
			t.Fatalf("neighbourhood sums pooled: %v, want all 9", out[:4])
		}
	}
}

func TestCNNForwardMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for ci, c := range cnnTestConfigs {
		m := newTestCNN(t, c)
		ref := func(x []float32, rows int) []float64 { return refCNNForward(m, x, rows) }
		checkForwardReference(t, ci, m, ref, rng, c.Chunk, 1) // a full chunk and a shorter pass
	}
}

// TestCNNGradientFiniteDifference checks ∂(Σ E⊙G)/∂θ from Backward against
// central differences of the independent float64 reference forward pass,
// for every entry of every parameter tensor (conv weights and biases of
// each block, output layer), on a pass shorter than the chunk. The model is
// float32 and max-pool/ReLU are piecewise linear: h = 1e-3 is small enough
// that a perturbation rarely changes which input wins a pool window, and the
// few entries where it does (a kink inside [θ−h, θ+h]) are re-checked with
// one-sided differences before they count as failures.
func TestCNNGradientFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for ci, c := range cnnTestConfigs {
		m := newTestCNN(t, c)
		s := backwardSurrogate(t, m, func(x []float32, rows int) []float64 { return refCNNForward(m, x, rows) }, rng)
		for _, p := range m.params {
			var norm float64
			for _, v := range p.Grad {
				norm += float64(v) * float64(v)
			}
			if !(norm > 1e-8) {
				t.Fatalf("config %d: %s has no gradient (|g|² = %v): the check below would be vacuous", ci, p.Name, norm)
			}
		}
		const h = 1e-3
		checked, kinks := 0, 0
		for _, p := range m.params {
			for i := range p.Data {
				old := p.Data[i]
				s0 := s()
				p.Data[i] = old + h
				up := s()
				p.Data[i] = old - h
				dn := s()
				p.Data[i] = old
				hu, hd := float64(float32(old+h)-old), float64(old-float32(old-h))
				fd := (up - dn) / (hu + hd)
				got := float64(p.Grad[i])
				checked++
				if math.Abs(fd-got) <= 2e-3*(1+math.Abs(fd)) {
					continue
				}
				// A kink between θ−h and θ+h: the analytic gradient must
				// match one of the one-sided slopes.
				fu, fdn := (up-s0)/hu, (s0-dn)/hd
				if math.Abs(fu-fdn) > 1e-2*(1+math.Abs(fu)) &&
					(math.Abs(fu-got) <= 2e-3*(1+math.Abs(fu)) || math.Abs(fdn-got) <= 2e-3*(1+math.Abs(fdn))) {
					kinks++
					continue
				}
				t.Errorf("config %d: d/d%s[%d]: backward %v, finite difference %v", ci, p.Name, i, got, fd)
			}
		}
		if kinks > checked/50 {
			t.Errorf("config %d: %d of %d entries sit on a kink; the check is not testing much", ci, kinks, checked)
		}
		t.Logf("config %d: %d parameter entries checked (%d at a ReLU/pool kink)", ci, checked, kinks)
	}
}

func TestCNNChunkedBackwardAccumulates(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	c := cnnTestConfigs[0]
	c.Chunk = 7
	whole := newTestCNN(t, c)
	c.Chunk = 3
	chunked := newTestCNN(t, c)
	checkChunkedBackward(t, rng, whole, chunked, 7)
}

func TestCNNDeterministicInit(t *testing.T) {
	c := Config{Arch: "cnn", InDim: 28 * 28, InChannels: 1, InHeight: 28, InWidth: 28, EmbedDim: 16, Chunk: 4, Seed: 42}
	a, b := newTestCNN(t, c), newTestCNN(t, c)
	if got := a.Config().Channels; len(got) != 2 || got[0] != 32 || got[1] != 64 {
		t.Fatalf("default channels %v, want [32 64]", got)
	}
	// 1×28×28 → 32×14×14 → 64×7×7 → 16
	wantShapes := [][]int{{9, 32}, {1, 32}, {288, 64}, {1, 64}, {64 * 7 * 7, 16}, {1, 16}}
	for k, p := range a.params {
		if p.Shape[0] != wantShapes[k][0] || p.Shape[1] != wantShapes[k][1] {
			t.Fatalf("%s shape %v, want %v", p.Name, p.Shape, wantShapes[k])
		}
		for i := range p.Data {
			if p.Data[i] != b.params[k].Data[i] {
				t.Fatalf("same seed, different init of %s", p.Name)
			}
		}
	}
	// He-uniform bound of the second conv: √(6/288).
	bound := float32(math.Sqrt(6.0 / 288))
	var maxAbs float32
	for _, v := range a.params[2].Data {
		maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
	}
	if maxAbs > bound || maxAbs < 0.9*bound {
		t.Fatalf("conv 2 weights reach %v, He bound %v", maxAbs, bound)
	}
	x := mat32.Matrix{Rows: 5, Cols: 784, Data: randVec(rand.New(rand.NewSource(1)), 5*784)}
	ea, err := Embed(a, x)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := Embed(b, x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ea.Data {
		if ea.Data[i] != eb.Data[i] {
			t.Fatal("same seed, different embeddings")
		}
	}
	c.Seed = 43
	d := newTestCNN(t, c)
	if d.params[0].Data[0] == a.params[0].Data[0] {
		t.Fatal("different seeds gave the same first weight")
	}
}

func TestCNNConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		c    Config
		want string
	}{
		"flat features":   {Config{Arch: "cnn", InDim: 512}, "needs image input"},
		"shape mismatch":  {Config{Arch: "cnn", InDim: 100, InChannels: 1, InHeight: 28, InWidth: 28}, "input rows have 100"},
		"too many blocks": {Config{Arch: "cnn", InDim: 64, InChannels: 1, InHeight: 8, InWidth: 8, Channels: []int{4, 4, 4, 4}}, "too small"},
		"bad width":       {Config{Arch: "cnn", InDim: 64, InChannels: 1, InHeight: 8, InWidth: 8, Channels: []int{4, 0}}, "must be positive"},
	} {
		if err := Check(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want an error with %q", name, err, tc.want)
		}
		if _, err := New(tc.c); err == nil {
			t.Errorf("%s: New accepted %+v", name, tc.c)
		}
	}
	if err := Check(Config{Arch: "cnn", InDim: 49, InChannels: 1, InHeight: 7, InWidth: 7, Channels: []int{2, 2}}); err != nil {
		t.Fatalf("7×7 with two blocks (7 → 3 → 1): %v", err)
	}
}

// TestCNNThreadsBitIdentical: the embeddings and every gradient are the
// same bits on one and on two threads (the weight gradient's fixed halves,
// the GEMM's and the pool's splits), for 1-channel and 16-channel blocks on
// maps large enough to split.
func TestCNNThreadsBitIdentical(t *testing.T) {
	c := Config{Arch: "cnn", InDim: 20 * 20, InChannels: 1, InHeight: 20, InWidth: 20, Channels: []int{16, 8}, EmbedDim: 6, Chunk: 5, L2Normalize: true, Seed: 7}
	rng := rand.New(rand.NewSource(3))
	x, g := randVec(rng, 5*400), randVec(rng, 5*6)
	run := func(threads int) ([]float32, [][]float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
		m := newTestCNN(t, c)
		out := make([]float32, 5*6)
		if err := m.Forward(x, 5, out); err != nil {
			t.Fatal(err)
		}
		if err := m.BackwardKept(g, 5); err != nil {
			t.Fatal(err)
		}
		var grads [][]float32
		for _, p := range m.Params() {
			grads = append(grads, p.Grad)
		}
		return out, grads
	}
	out1, g1 := run(1)
	out2, g2 := run(2)
	for i := range out1 {
		if math.Float32bits(out1[i]) != math.Float32bits(out2[i]) {
			t.Fatalf("embedding %d: %v on 1 thread, %v on 2", i, out1[i], out2[i])
		}
	}
	for p := range g1 {
		for i := range g1[p] {
			if math.Float32bits(g1[p][i]) != math.Float32bits(g2[p][i]) {
				t.Fatalf("gradient %d[%d]: %v on 1 thread, %v on 2", p, i, g1[p][i], g2[p][i])
			}
		}
	}
}

// TestConvBlockNCHWInput: a block fed the NCHW network input with several
// channels (converted to channel planes inside) gives the same bits, output
// and input gradient (converted back), as the block fed the planes.
func TestConvBlockNCHWInput(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	const B, C, H, W, cout = 3, 2, 5, 6, 4
	g := geom{B: B, C: C, H: H, W: W}
	w := &param.Param{Name: "w", Shape: []int{C * 9, cout}, Data: randVec(rng, C*9*cout), Grad: make([]float32, C*9*cout)}
	b := &param.Param{Name: "b", Shape: []int{1, cout}, Data: randVec(rng, cout), Grad: make([]float32, cout)}
	gn := g
	gn.nchw = true
	nchw, planes := newConvBlock(w, b, gn, true), newConvBlock(w, b, g, true)
	x := randVec(rng, B*C*H*W)
	xp := make([]float32, len(x))
	toPlanes(g, x, xp)
	y1, y2 := make([]float32, B*nchw.outWidth()), make([]float32, B*nchw.outWidth())
	nchw.forward(x, B, y1)
	planes.forward(xp, B, y2)
	dy := randVec(rng, len(y1))
	dx1, dx2, dx2n := make([]float32, len(x)), make([]float32, len(x)), make([]float32, len(x))
	nchw.backward(x, y1, dy, B, dx1)
	planes.backward(xp, y2, dy, B, dx2)
	fromPlanes(g, dx2, dx2n)
	for i := range y1 {
		if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
			t.Fatalf("output %d: %v from NCHW, %v from planes", i, y1[i], y2[i])
		}
	}
	for i := range dx1 {
		if math.Float32bits(dx1[i]) != math.Float32bits(dx2n[i]) {
			t.Fatalf("input gradient %d: %v from NCHW, %v from planes", i, dx1[i], dx2n[i])
		}
	}
}

// BenchmarkCNNStep times one Forward plus one Backward (which forwards
// again: the model's share of a multistage training step) of the default CNN (1×28×28, conv
// 32, 64, embedding 128, L2) on a chunk of 112 rows.
func BenchmarkCNNStep(b *testing.B) {
	c := Config{Arch: "cnn", InDim: 784, InChannels: 1, InHeight: 28, InWidth: 28, EmbedDim: 128, L2Normalize: true, Chunk: 112, Seed: 1}
	m := newTestCNN(b, c)
	rng := rand.New(rand.NewSource(1))
	x := randVec(rng, 112*784)
	for i := range x {
		x[i] = float32(math.Abs(float64(x[i]))) / 3 // pixel-like, ≥ 0
	}
	g := randVec(rng, 112*128)
	out := make([]float32, 112*128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.Forward(x, 112, out); err != nil {
			b.Fatal(err)
		}
		if err := m.Backward(x, g, 112); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMLPStep is BenchmarkCNNStep for the default MLP head on the same
// pixels (784 → 512 LayerNorm → 128, L2), for comparison.
func BenchmarkMLPStep(b *testing.B) {
	c := Config{InDim: 784, Hidden: []int{512}, Norm: "layer", EmbedDim: 128, L2Normalize: true, Chunk: 112, Seed: 1}
	m := newTestMLP(b, c)
	rng := rand.New(rand.NewSource(1))
	x := randVec(rng, 112*784)
	g := randVec(rng, 112*128)
	out := make([]float32, 112*128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.Forward(x, 112, out); err != nil {
			b.Fatal(err)
		}
		if err := m.Backward(x, g, 112); err != nil {
			b.Fatal(err)
		}
	}
}
