package metrics

import (
	"strings"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/usage"
)

// Binarize thresholds every coordinate at 0 (Fehérvári et al. 2019 §4: embeddings
// "thresholded at 0 into binary" codes, 2048-d binary vs 64-d float):
// x > 0 → +1, otherwise (x ≤ 0, including exact zeros) → −1, as float32.
//
// Between ±1 codes s, s′ of dimension D the Hamming distance is
//
//	H(s, s′) = #{t : s_t ≠ s′_t} = ‖s − s′‖² / 4,
//
// since each differing coordinate contributes (±2)² = 4. The squared L2
// distances of the codes are integers below 2^24 for D < 2^22, so every
// float32 k-NN kernel computes them exactly: searching the codes with
// knn.L2 ranks by Hamming distance exactly, ties by lower gallery index as
// the knn contract says, and Neighbors.Dist/4 is the Hamming count.
func Binarize(m mat32.Matrix) mat32.Matrix {
	out := mat32.Matrix{Rows: m.Rows, Cols: m.Cols, Data: make([]float32, len(m.Data))}
	for i, v := range m.Data {
		if v > 0 {
			out.Data[i] = 1
		} else {
			out.Data[i] = -1
		}
	}
	return out
}

// BinarizeInput is in with its embeddings and gallery binarized, to be
// ranked by Hamming distance, which only the euclidean distance gives on
// ±1 codes: another distance is a usage error.
func BinarizeInput(in Input, distance string) (Input, error) {
	if d := strings.ToLower(distance); d != "euclidean" && d != "l2" {
		return in, usage.Errorf("--binarize ranks by Hamming distance; --distance %s does not apply", distance)
	}
	in.Emb = Binarize(in.Emb)
	if in.Gallery != nil {
		g := Binarize(*in.Gallery)
		in.Gallery = &g
	}
	return in, nil
}
