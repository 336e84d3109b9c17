package metrics

import "sort"

// denseLabels maps arbitrary int32 labels of one or two sets to dense ids
// 0..C−1 (sorted by original value) so per-class counts are slices.
func denseLabels(sets ...[]int32) (ids [][]int32, classes int) {
	seen := map[int32]struct{}{}
	for _, s := range sets {
		for _, v := range s {
			seen[v] = struct{}{}
		}
	}
	vals := make([]int32, 0, len(seen))
	for v := range seen {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	idx := make(map[int32]int32, len(vals))
	for i, v := range vals {
		idx[v] = int32(i)
	}
	ids = make([][]int32, len(sets))
	for si, s := range sets {
		d := make([]int32, len(s))
		for i, v := range s {
			d[i] = idx[v]
		}
		ids[si] = d
	}
	return ids, len(vals)
}

// counts returns the number of items of each dense class id.
func counts(ids []int32, classes int) []int {
	c := make([]int, classes)
	for _, v := range ids {
		c[v]++
	}
	return c
}

func distinct(ids []int32) int {
	seen := map[int32]struct{}{}
	for _, v := range ids {
		seen[v] = struct{}{}
	}
	return len(seen)
}
