// Package exactdist compares distances between float32 rows exactly.
//
// Every float32 is an integer times 2⁻¹⁴⁹, so the squared Euclidean
// distance and the inner product of two float32 rows are integers times
// 2⁻²⁹⁸: their differences have an exact sign. The float64 estimates
// (L2, IP, Cos) carry a rigorous error bound; a comparison whose two
// intervals overlap is tried again with compensated sums (L2Tight, whose
// bound is 0 when the sum is exact), then settled in big-integer
// arithmetic (CmpL2, CmpIP, CmpCos). Less combines both: the exact order, ties to the lower index,
// at float64 cost except on near-ties.
package exactdist
