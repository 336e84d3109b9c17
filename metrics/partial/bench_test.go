package partial

import (
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/metrics"
)

// BenchmarkWriteRead writes and reads back one partial of 10 000 queries
// and 6 k-NN values.
func BenchmarkWriteRead(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	p := &metrics.Partial{Version: metrics.PartialVersion, Shard: metrics.Shard{Index: 0, Count: 1}, Hi: 10000,
		Keys: []string{"R@1", "R@10", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"}}
	for i := range 10000 {
		p.Index = append(p.Index, i)
	}
	for range p.Keys {
		col := make([]float64, 10000)
		for i := range col {
			col[i] = rng.Float64()
		}
		p.Values = append(p.Values, col)
	}
	dir := b.TempDir()
	b.ResetTimer()
	for range b.N {
		if err := Write(dir, p, nil); err != nil {
			b.Fatal(err)
		}
		if _, _, err := Read(dir + "/" + Name(p.Shard)); err != nil {
			b.Fatal(err)
		}
	}
}
