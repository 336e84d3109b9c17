package gpu

import "math"

// Candidates are ranked by the key of package knn (see knn/topk.go): the
// order-preserving bits of the internal distance D (smaller is closer; IP
// uses D = −q·x) in the high 32 bits, the database index in the low 32. The
// k smallest keys of a query are a unique set whatever order the candidates
// arrive in, and ties go to the lower index. The CUDA kernels build the same
// key (kernels.cu, okey).

// emptyKey marks an unfilled top-k slot; no candidate has it (index
// 0xFFFFFFFF is never a row).
const emptyKey = math.MaxUint64

func orderedBits(d float32) uint32 {
	if d == 0 {
		d = 0 // fold −0 into +0
	}
	b := math.Float32bits(d)
	if b&0x80000000 != 0 {
		return ^b
	}
	return b | 0x80000000
}

func fromOrderedBits(u uint32) float32 {
	if u&0x80000000 != 0 {
		return math.Float32frombits(u &^ 0x80000000)
	}
	return math.Float32frombits(^u)
}

func keyOf(d float32, id int) uint64 { return uint64(orderedBits(d))<<32 | uint64(uint32(id)) }

func keyDist(key uint64) float32 { return fromOrderedBits(uint32(key >> 32)) }
