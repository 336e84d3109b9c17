package fma32

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fmaRef is a·b + c computed exactly with big.Float and rounded once.
func fmaRef(a, b, c float32) float32 {
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) || math.IsNaN(float64(c)) {
		return float32(math.NaN())
	}
	x := new(big.Float).SetPrec(1000).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(1000).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(1000).SetFloat64(float64(c)))
	f, _ := x.Float32()
	if f == 0 { // exact zero sums: IEEE gives +0 unless both addends are −0
		return float32(float64(a)*float64(b) + float64(c))
	}
	return f
}

func TestFMA(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		t.Helper()
		got, want := FMA(a, b, c), fmaRef(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("FMA(%g, %g, %g) = %g (%#x), want %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for i := 0; i < 200000; i++ {
		a := float32(rng.NormFloat64())
		b := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(20)-10)))
		c := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
		check(a, b, c)
	}
	// Midpoint cases where float32(math.FMA(...)) rounds twice: a·b = 1 + 2^-24
	// + 2^-48-ish products added to values that put the float64 sum on a
	// float32 midpoint with a tiny remainder.
	one := float32(1)
	eps := float32(math.Exp2(-23))
	for i := 0; i < 50000; i++ {
		a := one + eps*float32(rng.IntN(1<<10))
		b := one + eps*float32(rng.IntN(1<<10))
		c := -float32(float64(a) * float64(b))
		c = math.Nextafter32(c, float32(rng.IntN(2)*2-1))
		check(a, b, c)
		check(a, b, float32(math.Exp2(-24))+c*0)
	}
	// A double-rounding case: a·b = 2^-24 − 2^-54 exactly; 1 + 2^-23 + a·b
	// rounds in float64 to the float32 midpoint 1 + 2^-23 + 2^-24, and then
	// to even (1 + 2^-22), but the exact sum lies below the midpoint.
	a := float32(1 + math.Exp2(-15))
	b := float32((1 - math.Exp2(-15)) * math.Exp2(-24))
	c := float32(1 + math.Exp2(-23))
	if float32(math.FMA(float64(a), float64(b), float64(c))) == fmaRef(a, b, c) {
		t.Fatal("the double-rounding case no longer double-rounds")
	}
	check(a, b, c)
	check(-a, b, -c)
	check(float32(math.Inf(1)), 1, 1)
	check(0, -1, 0)
	check(-0.0, 1, float32(math.Copysign(0, -1)))
	// Subnormal results and the overflow threshold.
	tiny := float32(math.Exp2(-149))
	for i := 0; i < 20000; i++ {
		a := float32(rng.NormFloat64() * 0x1p-70)
		b := float32(rng.NormFloat64() * 0x1p-70)
		check(a, b, tiny*float32(rng.IntN(1<<20)-1<<19))
	}
	check(math.MaxFloat32, 1, float32(math.Exp2(103)))
	check(math.MaxFloat32, 1+0x1p-23, -math.MaxFloat32)
	check(float32(math.NaN()), 1, 1)
}

// TestSqNorm: squares rounded before each addition, in order.
func TestSqNorm(t *testing.T) {
	row := []float32{1 + 0x1p-12, 3, 0x1p-30, -2}
	var want float32
	for _, v := range row {
		sq := float32(float64(v) * float64(v))
		want = float32(float64(want) + float64(sq))
	}
	if got := SqNorm(row); got != want {
		t.Fatalf("SqNorm = %g, want %g", got, want)
	}
	if got := SqNorm(nil); got != 0 {
		t.Fatalf("SqNorm(nil) = %g", got)
	}
}

// TestDot: one FMA chain in ascending order.
func TestDot(t *testing.T) {
	a := []float32{1 + 0x1p-12, 1 - 0x1p-12, 3}
	b := []float32{1 - 0x1p-12, 1 + 0x1p-12, 0x1p-20}
	var want float32
	for i := range a {
		want = fmaRef(a[i], b[i], want)
	}
	if got := Dot(a, b); got != want {
		t.Fatalf("Dot = %g, want %g", got, want)
	}
}
