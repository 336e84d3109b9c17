package knnkey

import (
	"math"
	"sort"
	"testing"
)

// Bits keeps the order of floats (−0 = +0) and FromBits inverts it.
func TestBitsOrder(t *testing.T) {
	vals := []float32{float32(math.Inf(-1)), -3, -1e-30, 0, 1e-30, 2, float32(math.Inf(1))}
	for i := 1; i < len(vals); i++ {
		if Bits(vals[i-1]) >= Bits(vals[i]) {
			t.Fatalf("Bits not monotone at %g", vals[i])
		}
		if FromBits(Bits(vals[i])) != vals[i] {
			t.Fatalf("round trip %g", vals[i])
		}
	}
	if Bits(float32(math.Copysign(0, -1))) != Bits(0) {
		t.Fatal("−0 and +0 must share a key")
	}
}

// Keys sort by distance, then by row; Output gives them back, the inner
// product's negated (D = −q·x) with −0 folded into +0.
func TestKeyOrderAndOutput(t *testing.T) {
	keys := []uint64{Of(2, 1), Of(-1, 9), Of(2, 0), Of(0.5, 3)}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	want := []struct {
		id int32
		d  float32
	}{{9, -1}, {3, 0.5}, {0, 2}, {1, 2}}
	for i, k := range keys {
		if id, d := Output(k, false); id != want[i].id || d != want[i].d || Dist(k) != d {
			t.Fatalf("key %d: row %d distance %g, want %+v", i, id, d, want[i])
		}
	}
	if id, d := Output(Of(-0.25, 4), true); id != 4 || d != 0.25 {
		t.Fatalf("inner product: row %d, %g", id, d)
	}
	if _, d := Output(Of(0, 4), true); math.Signbit(float64(d)) {
		t.Fatal("inner product 0 came back as −0")
	}
	if Of(float32(math.Inf(1)), 0xFFFFFFFE) >= Empty {
		t.Fatal("a real candidate reaches Empty")
	}
}
