package samplers

import (
	"math/rand"
	"reflect"
	"testing"
)

// GC on the points {0, 1, 3, 10} (one class each, K = 1, batch 3): from
// each possible first anchor, farthest-first is fixed by hand:
// 0 → 10 (d 10) → 3 (nearest anchor at 3 vs 1 for 1); 1 → 10 → 3 (4 vs 1);
// 3 → 10 (7) → 0 (3 vs 2); 10 → 0 (10) → 3 (3 vs 1).
func TestGreedyCoresetPicksFarthest(t *testing.T) {
	labels := []int32{0, 1, 2, 3}
	want := map[int][]int{0: {0, 3, 2}, 1: {1, 3, 2}, 2: {2, 3, 0}, 3: {3, 0, 2}}
	seen := map[int]bool{}
	for seed := int64(0); seed < 40; seed++ {
		s := &Coreset{K: 1}
		if err := s.Refresh(line(0, 1, 3, 10)); err != nil {
			t.Fatal(err)
		}
		bs, err := s.Batches(labels, 3, 1, rand.New(rand.NewSource(seed)))
		if err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		if !reflect.DeepEqual(b, want[b[0]]) {
			t.Fatalf("seed %d: batch %v, want %v", seed, b, want[b[0]])
		}
		seen[b[0]] = true
	}
	if len(seen) != 4 {
		t.Fatalf("first anchor not random: only %v", seen)
	}
}

// D²: after an anchor at 0, a point at 10 (d² 100) is drawn over one at 0.1
// (d² 0.01) with probability 100/100.01; the anchors never repeat.
func TestD2CoresetDrawsByDistance(t *testing.T) {
	labels := []int32{0, 1, 2}
	far := 0
	for seed := int64(0); seed < 300; seed++ {
		s := &Coreset{K: 1, D2: true}
		s.Refresh(line(0, 0.1, 10))
		bs, err := s.Batches(labels, 3, 1, rand.New(rand.NewSource(seed)))
		if err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		if b[0] == b[1] || b[1] == b[2] || b[0] == b[2] {
			t.Fatalf("repeated anchor %v", b)
		}
		if b[0] == 0 && b[1] == 2 || b[0] == 1 && b[1] == 2 {
			far++
		}
		if b[0] == 0 && b[1] == 1 || b[0] == 1 && b[1] == 0 {
			far-- // the near neighbour: should (almost) never happen
		}
	}
	if far < 150 { // ≈ 2/3 of 300 seeds start at 0 or 0.1
		t.Fatalf("D² drew the far point only %d times", far)
	}
}
