package clustering

import (
	"reflect"
	"testing"
)

// The C++ standard (N4860 [rand.predef]) requires the 10 000th output of a
// default-constructed std::mt19937 (seed 5489) to be 4123659995.
func TestMT19937StandardValue(t *testing.T) {
	m := newMT19937(5489)
	var v uint32
	for i := 0; i < 10000; i++ {
		v = m.next()
	}
	if v != 4123659995 {
		t.Fatalf("10000th output %d, want 4123659995", v)
	}
}

// Reference values printed by Debian's python3-faiss 1.7.3:
// faiss.RandomGenerator(1234).rand_float() / rand_int(1000) six times, and
// faiss.rand_perm(p, 20, seed) for seeds 7 and −3.
func TestFaissRNGMatchesFaiss(t *testing.T) {
	wantF := []float32{0.19151945412158966, 0.497663676738739, 0.6221087574958801, 0.8178384304046631, 0.43772774934768677, 0.6121118664741516}
	r := newFaissRNG(1234)
	for i, w := range wantF {
		if g := r.float32(); g != w {
			t.Fatalf("rand_float #%d = %v, faiss %v", i, g, w)
		}
	}
	wantI := []int{775, 171, 806, 365, 316, 564}
	r = newFaissRNG(1234)
	for i, w := range wantI {
		if g := r.intn(1000); g != w {
			t.Fatalf("rand_int(1000) #%d = %d, faiss %d", i, g, w)
		}
	}
	perms := map[int64][]int32{
		7:  {15, 17, 9, 12, 7, 1, 19, 3, 4, 11, 18, 8, 2, 14, 16, 0, 10, 13, 6, 5},
		-3: {11, 9, 7, 1, 15, 4, 10, 0, 8, 16, 18, 17, 13, 6, 5, 19, 14, 12, 3, 2},
	}
	for seed, w := range perms {
		if g := faissRandPerm(20, seed); !reflect.DeepEqual(g, w) {
			t.Fatalf("rand_perm(20, %d) = %v, faiss %v", seed, g, w)
		}
	}
	if g := faissRandPerm(1, 5); !reflect.DeepEqual(g, []int32{0}) {
		t.Fatalf("rand_perm(1) = %v", g)
	}
	if g := faissRandPerm(0, 5); len(g) != 0 {
		t.Fatalf("rand_perm(0) = %v", g)
	}
}
