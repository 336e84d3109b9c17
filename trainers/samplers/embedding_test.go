package samplers

import (
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// line embeds the 1-D points xs as rows (x, 0).
func line(xs ...float64) mat32.Matrix {
	m := mat32.Matrix{Rows: len(xs), Cols: 2, Data: make([]float32, 2*len(xs))}
	for i, x := range xs {
		m.Data[2*i] = float32(x)
	}
	return m
}

func randEmb(rows, cols int, seed int64) mat32.Matrix {
	rng := rand.New(rand.NewSource(seed))
	m := mat32.Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

// Every embedding-aware sampler returns full batches of distinct indices
// in which each class appears K = 2 times (GC: a multiple of 2, two anchors
// may share a class); the same seed gives the same batches.
func TestEmbeddingSamplerComposition(t *testing.T) {
	labels := labelsOf(40, 10)
	emb := randEmb(len(labels), 8, 5)
	for _, name := range []string{"ddm", "frd", "gc", "gc-d2"} {
		s, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		es := s.(EmbeddingSampler)
		if _, err := s.Batches(labels, 32, 2, rand.New(rand.NewSource(1))); err == nil {
			t.Fatalf("%s: batches without embeddings", name)
		}
		if err := es.Refresh(randEmb(5, 8, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Batches(labels, 32, 2, rand.New(rand.NewSource(1))); err == nil {
			t.Fatalf("%s: embeddings of the wrong size accepted", name)
		}
		bad := randEmb(3, 2, 1)
		bad.Data[1] = float32(math.NaN())
		if err := es.Refresh(bad); err == nil {
			t.Fatalf("%s: NaN embeddings accepted", name)
		}
		es.Refresh(emb)
		bs, err := s.Batches(labels, 32, 6, rand.New(rand.NewSource(3)))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := s.Batches(labels, 32, 6, rand.New(rand.NewSource(3)))
		if !reflect.DeepEqual(bs, again) {
			t.Fatalf("%s: same seed, different batches", name)
		}
		if len(bs) != 6 {
			t.Fatalf("%s: %d batches", name, len(bs))
		}
		for _, b := range bs {
			if len(b) != 32 {
				t.Fatalf("%s: batch of %d", name, len(b))
			}
			seen := map[int]bool{}
			count := map[int32]int{}
			for _, i := range b {
				if i < 0 || i >= len(labels) || seen[i] {
					t.Fatalf("%s: bad or repeated index %d in %v", name, i, b)
				}
				seen[i] = true
				count[labels[i]]++
			}
			for c, n := range count {
				if n%2 != 0 || (name == "ddm" || name == "frd") && n != 2 {
					t.Fatalf("%s: class %d has %d samples", name, c, n)
				}
			}
		}
		// Odd batch, tiny set: still full batches (the last class cut short,
		// items reused only when the set is exhausted).
		small := labelsOf(2, 3)
		es.Refresh(randEmb(6, 4, 2))
		bs, err = s.Batches(small, 7, 2, rand.New(rand.NewSource(1)))
		if err != nil || len(bs[0]) != 7 || len(bs[1]) != 7 {
			t.Fatalf("%s: tiny set: %v %v", name, bs, err)
		}
	}
}
