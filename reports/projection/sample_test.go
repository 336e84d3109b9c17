package projection

import (
	"math/rand"
	"reflect"
	"testing"
)

// The sample is seeded: k classes out of the sorted ids, then maxPts rows,
// both sorted; the same seed draws the same sample.
func TestSampleRows(t *testing.T) {
	ids := []int32{5, 3, 3, 9, 5, 1, 9, 1, 3}
	rows, cl := sampleRows(ids, 0, 0, rand.New(rand.NewSource(1)))
	if !reflect.DeepEqual(cl, []int32{1, 3, 5, 9}) || len(rows) != 9 {
		t.Fatalf("all: %v %v", rows, cl)
	}
	rows, cl = sampleRows(ids, 2, 3, rand.New(rand.NewSource(4)))
	r2, c2 := sampleRows(ids, 2, 3, rand.New(rand.NewSource(4)))
	if len(cl) != 2 || len(rows) != 3 || !reflect.DeepEqual(rows, r2) || !reflect.DeepEqual(cl, c2) {
		t.Fatalf("sample %v %v vs %v %v", rows, cl, r2, c2)
	}
	for k, i := range rows {
		if ids[i] != cl[0] && ids[i] != cl[1] || k > 0 && rows[k-1] >= i {
			t.Fatalf("rows %v not sorted rows of classes %v", rows, cl)
		}
	}
}
