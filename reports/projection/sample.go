package projection

import (
	"math/rand"
	"sort"
)

// Sample is the seeded subsample of an embedding file that a projection
// shows (exact t-SNE costs O(N²) per step): rows of the file and the
// classes drawn, both sorted.
type Sample struct {
	Rows    []int
	Classes []int32
	// AllClasses is the number of distinct labels in the file.
	AllClasses int
}

// SampleRows draws, with a generator seeded by seed, k classes (all when
// k is 0 or exceeds their number) from the sorted distinct ids, then at
// most maxPts of their rows (all when 0).
func SampleRows(ids []int32, k, maxPts int, seed int64) Sample {
	rows, classes := sampleRows(ids, k, maxPts, rand.New(rand.NewSource(seed)))
	return Sample{Rows: rows, Classes: classes, AllClasses: distinctIDs(ids)}
}

// sampleRows draws k classes (all when k is 0 or exceeds their number)
// from the sorted distinct ids, then at most maxPts of their rows (all when
// 0); both lists come back sorted, so the projection's input order is the file's.
func sampleRows(ids []int32, k, maxPts int, rng *rand.Rand) (rows []int, classes []int32) {
	seen := map[int32]bool{}
	for _, l := range ids {
		if !seen[l] {
			seen[l] = true
			classes = append(classes, l)
		}
	}
	sort.Slice(classes, func(a, b int) bool { return classes[a] < classes[b] })
	if k > 0 && k < len(classes) {
		classes = pickInOrder(classes, k, rng)
	}
	keep := map[int32]bool{}
	for _, l := range classes {
		keep[l] = true
	}
	for i, l := range ids {
		if keep[l] {
			rows = append(rows, i)
		}
	}
	if maxPts > 0 && maxPts < len(rows) {
		rows = pickInOrder(rows, maxPts, rng)
	}
	return rows, classes
}

// pickInOrder returns k entries of s drawn at random without replacement
// (k < len(s)), in their order in s.
func pickInOrder[T any](s []T, k int, rng *rand.Rand) []T {
	perm := rng.Perm(len(s))[:k]
	sort.Ints(perm)
	picked := make([]T, k)
	for i, p := range perm {
		picked[i] = s[p]
	}
	return picked
}

// distinctIDs is the number of distinct values in ids.
func distinctIDs(ids []int32) int {
	seen := map[int32]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	return len(seen)
}
