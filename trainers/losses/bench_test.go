package losses

import (
	"math/rand"
	"testing"
)

// benchBatch is a training-shaped batch: B = 112 (14 classes × 8 samples, seed
// 000's batch size), D = 128, labels among 100 training classes (CUB-sized
// proxy sets).
func benchBatch() Batch {
	const B, D = 112, 128
	rng := rand.New(rand.NewSource(1))
	b := Batch{Emb: make([]float32, B*D), Labels: make([]int, B), B: B, D: D, Rng: rng}
	for i := range b.Emb {
		b.Emb[i] = float32(rng.NormFloat64())
	}
	for i := range b.Labels {
		b.Labels[i] = 7 * (i / 8) // 14 classes in [0, 100)
	}
	return b
}

// BenchmarkForward measures one training step of each loss (mining, forward
// and backward, through the cached graph where the loss has one) at
// B = 112, D = 128.
func BenchmarkForward(b *testing.B) {
	for _, info := range All() {
		if info.Teacher {
			continue // needs a trained teacher (mpn_test.go)
		}
		b.Run(info.Name, func(b *testing.B) {
			l := newLoss(b, info.Name, Config{NumClasses: 100, Dim: 128, Seed: 1})
			bt := benchBatch()
			grad := make([]float32, bt.B*bt.D)
			if _, err := l.Forward(bt, grad); err != nil { // compile outside the timing
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := l.Forward(bt, grad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRebuild is the same step when the graph and TapeMachine are built
// anew every time (what the per-shape cache avoids).
func BenchmarkRebuild(b *testing.B) {
	for _, info := range All() {
		if info.Teacher {
			continue // needs a trained teacher (mpn_test.go)
		}
		b.Run(info.Name, func(b *testing.B) {
			bt := benchBatch()
			grad := make([]float32, bt.B*bt.D)
			b.ReportAllocs()
			for range b.N {
				l := newLoss(b, info.Name, Config{NumClasses: 100, Dim: 128, Seed: 1})
				if _, err := l.Forward(bt, grad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
