package exactdist

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// rat returns f exactly.
func rat(f float32) *big.Rat { return new(big.Rat).SetFloat64(float64(f)) }

func refL2(x, a []float32) *big.Rat {
	s := new(big.Rat)
	for t := range x {
		d := new(big.Rat).Sub(rat(x[t]), rat(a[t]))
		s.Add(s, d.Mul(d, d))
	}
	return s
}

func refIP(x, a []float32) *big.Rat {
	s := new(big.Rat)
	for t := range x {
		s.Add(s, new(big.Rat).Mul(rat(x[t]), rat(a[t])))
	}
	return s
}

// cases are pairs of rows nearly or exactly as far from a query: the
// equal distances of (t,t,t,1) and (1,t,t,t), t = 2⁻²⁷, from the origin
// (index-order float64 sums give 1 + 2⁻⁵² and 1), reversed copies,
// 1-ulp neighbours, rows of size 1e-19 and 1e-40 (subnormal), and
// random rows of mixed scale.
func cases() [][3][]float32 {
	t := float32(0x1p-27)
	out := [][3][]float32{
		{{0, 0, 0, 0}, {t, t, t, 1}, {1, t, t, t}},
		{{0, 0, 0, 0}, {1, t, t, t}, {t, t, t, 1}},
		{{1e-19, 0, 0}, {0, 1e-19, 0}, {0, 0, 1e-19}},
		{{1e-40, 2e-40, 0}, {0, 0, 3e-40}, {3e-40, 0, 0}},
	}
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 300; i++ {
		d := 1 + rng.Intn(40)
		x, a := make([]float32, d), make([]float32, d)
		scale := math.Pow(10, float64(rng.Intn(40)-20))
		for k := range x {
			x[k] = float32(rng.NormFloat64() * scale)
			a[k] = float32(rng.NormFloat64() * scale)
		}
		b := make([]float32, d)
		switch i % 3 {
		case 0: // reversed copy: same distance from the origin
			for k := range x {
				x[k] = 0
				b[k] = a[d-1-k]
			}
		case 1: // one coordinate 1 ulp away
			copy(b, a)
			j := rng.Intn(d)
			b[j] = math.Nextafter32(b[j], float32(math.Inf(1)))
		default:
			for k := range b {
				b[k] = float32(rng.NormFloat64() * scale)
			}
		}
		out = append(out, [3][]float32{x, a, b})
	}
	return out
}

func TestCmpExact(t *testing.T) {
	for i, c := range cases() {
		x, a, b := c[0], c[1], c[2]
		if got, want := CmpL2(x, a, b), refL2(x, a).Cmp(refL2(x, b)); got != want {
			t.Errorf("case %d: CmpL2 %d, exact %d", i, got, want)
		}
		if got, want := CmpIP(x, a, b), refIP(x, a).Cmp(refIP(x, b)); got != want {
			t.Errorf("case %d: CmpIP %d, exact %d", i, got, want)
		}
		// cos(x,a) vs cos(x,b) exactly: compare p·|p|·‖b‖² with q·|q|·‖a‖².
		p, q := refIP(x, a), refIP(x, b)
		na, nb := refIP(a, a), refIP(b, b)
		if na.Sign() == 0 || nb.Sign() == 0 {
			continue
		}
		l := new(big.Rat).Mul(p, new(big.Rat).Abs(p))
		l.Mul(l, nb)
		r := new(big.Rat).Mul(q, new(big.Rat).Abs(q))
		r.Mul(r, na)
		if got, want := CmpCos(x, a, b), l.Cmp(r); got != want {
			t.Errorf("case %d: CmpCos %d, exact %d", i, got, want)
		}
	}
}

// TestBoundsHold: the float64 estimates lie within their bounds of the
// exact values, and Compare gives the exact order (ties to the lower
// index) whichever way the float64 keys round.
func TestBoundsHold(t *testing.T) {
	for i, c := range cases() {
		x, a, b := c[0], c[1], c[2]
		for _, row := range [][]float32{a, b} {
			for name, f := range map[string]func(x, a []float32) (float64, float64){"L2": L2, "L2Tight": L2Tight} {
				v, e := f(x, row)
				if d := new(big.Rat).Sub(new(big.Rat).SetFloat64(v), refL2(x, row)); new(big.Rat).Abs(d).Cmp(new(big.Rat).SetFloat64(e)) > 0 {
					t.Errorf("case %d: %s off by %v, bound %g", i, name, d.FloatString(30), e)
				}
			}
			v, e := IP(x, row)
			if d := new(big.Rat).Sub(new(big.Rat).SetFloat64(v), refIP(x, row)); new(big.Rat).Abs(d).Cmp(new(big.Rat).SetFloat64(e)) > 0 {
				t.Errorf("case %d: IP off by %v, bound %g", i, d.FloatString(30), e)
			}
		}
		rows := [][]float32{a, b}
		r := Ranker{Kind: SquaredL2, X: x, Row: func(id int32) []float32 { return rows[id] }}
		want := refL2(x, a).Cmp(refL2(x, b))
		if want == 0 {
			want = -1
		}
		if got := r.Compare(r.Cand(0), r.Cand(1)); got != want {
			t.Errorf("case %d: Compare %d, exact order %d", i, got, want)
		}
	}
}
