package knn

import (
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/knnkey"
)

// benchSpecSelect times one speculative-cap selection as initSpec makes it:
// the 147th smallest of 2 048 sample keys (20 000 rows, maxRank 1 000).
func benchSpecSelect(b *testing.B, sel func([]uint64, int, []uint64) uint64) {
	rng := rand.New(rand.NewSource(1))
	a := make([]uint64, 2048)
	for i := range a {
		a[i] = knnkey.Of(float32(1.6+0.2*rng.NormFloat64()), i*10)
	}
	w := make([]uint64, len(a))
	scratch := make([]uint64, len(a))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(w, a)
		sel(w, 147, scratch)
	}
}

func BenchmarkSpecSelectRadixSelect(b *testing.B) { benchSpecSelect(b, radixSelect) }
func BenchmarkSpecSelectRadixKth(b *testing.B)    { benchSpecSelect(b, radixKth) }

// BenchmarkSpecSelectSpecKth is the same selection through specKth (the
// first 256 keys, a random subset here, give the pivot).
func BenchmarkSpecSelectSpecKth(b *testing.B) {
	benchSpecSelect(b, func(a []uint64, k int, scratch []uint64) uint64 {
		return specKth(a, 256, k, scratch)
	})
}
