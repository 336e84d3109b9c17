package model

import (
	"hash/fnv"
	"math"
	"math/rand"
	"testing"
)

// hashRuns hashes the bits of the outputs and gradients of steps
// Forward/Backward calls (varying rows, parameters updated between steps).
func hashRuns(t *testing.T, c Config, steps int) uint64 {
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rng := rand.New(rand.NewSource(1))
	h := fnv.New64a()
	put := func(vs []float32) {
		for _, v := range vs {
			b := math.Float32bits(v)
			h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)})
		}
	}
	for s := 0; s < steps; s++ {
		x := make([]float32, c.Chunk*c.InDim)
		g := make([]float32, c.Chunk*c.EmbedDim)
		for i := range x {
			x[i] = float32(math.Abs(rng.NormFloat64()))
		}
		for i := range g {
			g[i] = float32(rng.NormFloat64())
		}
		out := make([]float32, c.Chunk*c.EmbedDim)
		rows := c.Chunk - s%3
		m.Forward(x, rows, out)
		put(out)
		m.Backward(x, g, rows)
		for _, p := range m.Params() {
			put(p.Grad)
			for i := range p.Data {
				p.Data[i] -= 0.01 * p.Grad[i]
			}
		}
	}
	return h.Sum64()
}

// TestRewindMatchesReset: running the compiled programs with their
// registers kept (rewind) gives the same bits as Gorgonia's Reset, which
// reallocates every tensor, over several steps, for the MLP and the CNN;
// and rewind does take hold on this Gorgonia version.
func TestRewindMatchesReset(t *testing.T) {
	defer func() { keepRegisters = true }()
	for name, c := range map[string]Config{
		"mlp": {InDim: 64, Hidden: []int{48}, Norm: "layer", EmbedDim: 16, L2Normalize: true, Chunk: 20, Seed: 1},
		"cnn": {Arch: "cnn", InDim: 2 * 12 * 12, InChannels: 2, InHeight: 12, InWidth: 12, Channels: []int{4, 6}, EmbedDim: 8, L2Normalize: true, Chunk: 10, Seed: 1},
	} {
		keepRegisters = false
		reset := hashRuns(t, c, 5)
		keepRegisters = true
		if kept := hashRuns(t, c, 5); kept != reset {
			t.Errorf("%s: rewound runs differ from reset runs", name)
		}
	}
	m, err := New(Config{InDim: 8, Hidden: []int{4}, EmbedDim: 2, Chunk: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !rewind(m.(*MLP).fwd) {
		t.Fatal("rewind does not recognise Gorgonia's tape machine: every run reallocates")
	}
}

// TestGeZero checks the branch-free x ≥ 0 mask of the ReLU gradient on
// the edge cases.
func TestGeZero(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		v    float32
		want bool
	}{{1, true}, {0, true}, {float32(math.Copysign(0, -1)), true}, {-1, false}, {1e-45, true}, {-1e-45, false},
		{float32(math.Inf(1)), true}, {float32(math.Inf(-1)), false}, {nan, false}, {-nan, false}} {
		if got := geZero(c.v) == 0xffffffff; got != c.want || (!got && geZero(c.v) != 0) {
			t.Errorf("geZero(%v) = %#x, want ≥ 0: %v", c.v, geZero(c.v), c.want)
		}
	}
}
