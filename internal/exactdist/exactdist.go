package exactdist

import (
	"math"
	"math/big"
)

// u64 is float64's unit roundoff.
const u64 = 0x1p-53

// L2 returns ‖x − a‖² summed in float64 in index order and a bound on its
// error. Each difference, square and addition rounds with relative error
// ≤ u = 2⁻⁵³, and every term is ≥ 0, so |v − ‖x − a‖²| ≤ γ_{D+2}·‖x − a‖²
// (Higham 2002, §3.1), at most (D + 3)·2u·v for D·u < 1/4; a float32
// difference is 0 or ≥ 2⁻¹⁴⁹ in magnitude, whose square 2⁻²⁹⁸ is a normal
// float64, so nothing underflows.
func L2(x, a []float32) (v, err float64) {
	for t := range x {
		d := float64(x[t]) - float64(a[t])
		v += d * d
	}
	return v, v * float64(len(x)+3) * 2 * u64
}

// IP returns ⟨x, a⟩ summed in float64 in index order and a bound on its
// error: the products of two float32 are exact in float64, the D − 1
// additions err by at most γ_{D−1}·Σ|x_t·a_t| ≤ (D + 1)·u·Σ|x_t·a_t|.
func IP(x, a []float32) (v, err float64) {
	var abs float64
	for t := range x {
		p := float64(x[t]) * float64(a[t])
		v += p
		abs += math.Abs(p)
	}
	return v, abs * float64(len(x)+1) * u64 * (1 + 0x1p-20)
}

// Cos returns ⟨x, a⟩ / ‖a‖ in float64 — the cosine of x and a times ‖x‖,
// which orders the rows a by their cosine to a fixed x — and a bound on
// its error: that of IP divided by ‖a‖, plus the relative error of ‖a‖
// (the sum of squares errs by γ_D, the square root and the division add
// u each): (D/2 + 3)·u·|v|, doubled for safety. a must not be zero.
func Cos(x, a []float32) (v, err float64) {
	ip, e := IP(x, a)
	var s float64
	for _, w := range a {
		s += float64(w) * float64(w)
	}
	n := math.Sqrt(s)
	v = ip / n
	return v, (e/n + math.Abs(v)*float64(len(x)+6)*u64) * (1 + 0x1p-20)
}

// fixed returns f·2¹⁴⁹ as an integer (exact for every finite float32).
func fixed(z *big.Int, f float32) *big.Int {
	b := math.Float32bits(f)
	e := int(b>>23) & 0xff
	m := int64(b & (1<<23 - 1))
	if e > 0 {
		m |= 1 << 23
		e--
	}
	z.SetInt64(m)
	z.Lsh(z, uint(e))
	if b>>31 != 0 {
		z.Neg(z)
	}
	return z
}

// CmpL2 returns the sign of ‖x − a‖² − ‖x − b‖², computed exactly as
// Σ (b_t − a_t)(2x_t − a_t − b_t) over integers scaled by 2¹⁴⁹.
func CmpL2(x, a, b []float32) int {
	var s, X, A, B, u, w big.Int
	for t := range x {
		fixed(&X, x[t])
		fixed(&A, a[t])
		fixed(&B, b[t])
		u.Sub(&B, &A)
		w.Lsh(&X, 1)
		w.Sub(&w, &A)
		w.Sub(&w, &B)
		u.Mul(&u, &w)
		s.Add(&s, &u)
	}
	return s.Sign()
}

// CmpIP returns the sign of ⟨x, a⟩ − ⟨x, b⟩, computed exactly.
func CmpIP(x, a, b []float32) int {
	var s, X, A, B, u big.Int
	for t := range x {
		fixed(&X, x[t])
		fixed(&A, a[t])
		fixed(&B, b[t])
		u.Sub(&A, &B)
		u.Mul(&u, &X)
		s.Add(&s, &u)
	}
	return s.Sign()
}

// CmpCos returns the sign of cos(x, a) − cos(x, b), computed exactly:
// with p = ⟨x, a⟩, q = ⟨x, b⟩ it compares p/‖a‖ with q/‖b‖ by their signs
// and then p²·‖b‖² with q²·‖a‖². a and b must not be zero.
func CmpCos(x, a, b []float32) int {
	var p, q, na, nb, X, A, B, u big.Int
	for t := range x {
		fixed(&X, x[t])
		fixed(&A, a[t])
		fixed(&B, b[t])
		p.Add(&p, u.Mul(&X, &A))
		q.Add(&q, u.Mul(&X, &B))
		na.Add(&na, u.Mul(&A, &A))
		nb.Add(&nb, u.Mul(&B, &B))
	}
	sp, sq := p.Sign(), q.Sign()
	if sp != sq {
		if sp > sq {
			return 1
		}
		return -1
	}
	if sp == 0 {
		return 0
	}
	var l, r big.Int
	l.Mul(&p, &p)
	l.Mul(&l, &nb)
	r.Mul(&q, &q)
	r.Mul(&r, &na)
	return l.Cmp(&r) * sp
}
