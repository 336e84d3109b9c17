// Package knnkey is the candidate key of the exact k-NN searchers (package
// knn and its GPU backend knn/gpu, whose CUDA kernels build the same key in
// kernels.cu, okey): one uint64 holding the order-preserving bit pattern of
// the internal distance D (smaller is closer; inner product uses D = −q·x)
// in the high 32 bits and the database index in the low 32 bits. Comparing
// keys compares (D, index) lexicographically, which is exactly the
// searchers' tie rule (equal distances → lower index first), so the k
// smallest keys are a unique set whatever order the candidates arrive in.
package knnkey

import "math"

// Empty marks an unfilled top-k slot; no candidate has it (index
// 0xFFFFFFFF is never a row).
const Empty = math.MaxUint64

// Bits maps a float32 to a uint32 with the same order (−0 counts as +0).
func Bits(d float32) uint32 {
	if d == 0 {
		d = 0 // fold −0 into +0
	}
	b := math.Float32bits(d)
	if b&0x80000000 != 0 {
		return ^b
	}
	return b | 0x80000000
}

// FromBits inverts Bits.
func FromBits(u uint32) float32 {
	if u&0x80000000 != 0 {
		return math.Float32frombits(u &^ 0x80000000)
	}
	return math.Float32frombits(^u)
}

// Of is the key of distance d to database row id.
func Of(d float32, id int) uint64 { return uint64(Bits(d))<<32 | uint64(uint32(id)) }

// Dist is the distance D of a key.
func Dist(key uint64) float32 { return FromBits(uint32(key >> 32)) }

// Output is what a searcher reports for key: the row and the distance,
// for the inner product negated back from D = −q·x (−0 folded into +0).
func Output(key uint64, ip bool) (int32, float32) {
	d := Dist(key)
	if ip {
		d = -d
		if d == 0 {
			d = 0
		}
	}
	return int32(uint32(key)), d
}
