package metrics

import (
	"math"
	"math/rand"
	"testing"
)

func mustCT(t *testing.T, y, k []int32) *contingency {
	t.Helper()
	c, err := newContingency(y, k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClusterHandWorked(t *testing.T) {
	// labels 0 0 0 1 1, clusters 0 0 1 1 1.
	c := mustCT(t, []int32{0, 0, 0, 1, 1}, []int32{0, 0, 1, 1, 1})
	// Same-class pairs 3+1, same-cluster pairs 1+3, TP = C(2,2)+C(2,2) = 2 → F1 = 4/8.
	if got := c.F1(); !near(got, 0.5) {
		t.Errorf("F1 = %v, want 0.5", got)
	}
	// MI = .4 ln(5/3) + .2 ln(5/9) + .4 ln(5/3); H(Y) = H(Ω) = H(.6,.4).
	mi := 0.8*math.Log(5.0/3) + 0.2*math.Log(5.0/9)
	h := -(0.6*math.Log(0.6) + 0.4*math.Log(0.4))
	if got := c.NMI(); !near(got, mi/h) {
		t.Errorf("NMI = %v, want %v", got, mi/h)
	}
	if !near(mi/h, 0.43253806) && math.Abs(mi/h-0.43253806) > 1e-8 {
		t.Errorf("hand value drifted: %v", mi/h)
	}
}

func TestClusterPerfectAndIndependent(t *testing.T) {
	// Perfect up to renaming of clusters.
	c := mustCT(t, []int32{0, 0, 1, 1, 2, 2}, []int32{5, 5, 3, 3, 0, 0})
	for name, v := range map[string]float64{"NMI": c.NMI(), "F1": c.F1(), "AMI": c.AMI()} {
		if !near(v, 1) {
			t.Errorf("%s = %v, want 1", name, v)
		}
	}
	// Cross partition: MI = 0, NMI = 0, F1 = 0 (no pair shares both).
	c = mustCT(t, []int32{0, 0, 1, 1}, []int32{0, 1, 0, 1})
	if c.NMI() != 0 || c.F1() != 0 {
		t.Errorf("independent: NMI %v F1 %v", c.NMI(), c.F1())
	}
}

// E[MI] under the permutation model equals the average MI over every
// permutation of the cluster labels: an independent check of the closed form.
func TestExpectedMutualInfoByEnumeration(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 4; trial++ {
		n := 7
		y := make([]int32, n)
		k := make([]int32, n)
		for i := range y {
			y[i] = int32(rng.Intn(3))
			k[i] = int32(rng.Intn(3))
		}
		sum, cnt := 0.0, 0
		permute(k, 0, func(p []int32) {
			sum += mustCT(t, y, p).mutualInfo()
			cnt++
		})
		c := mustCT(t, y, k)
		want := sum / float64(cnt)
		got := expectedMutualInfo(c.classN, c.clustN, n)
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: EMI = %.15g, enumeration = %.15g", trial, got, want)
		}
		// AMI from its definition with the enumerated expectation.
		hy, hk := entropy(c.classN, n), entropy(c.clustN, n)
		ami := (c.mutualInfo() - want) / ((hy+hk)/2 - want)
		if math.Abs(c.AMI()-ami) > 1e-9 {
			t.Errorf("trial %d: AMI = %v, want %v", trial, c.AMI(), ami)
		}
	}
}

func permute(a []int32, i int, f func([]int32)) {
	if i == len(a) {
		f(a)
		return
	}
	for j := i; j < len(a); j++ {
		a[i], a[j] = a[j], a[i]
		permute(a, i+1, f)
		a[i], a[j] = a[j], a[i]
	}
}

// F1 from the contingency table equals the literal loop over all pairs.
func TestF1MatchesPairLoop(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 200
	y := make([]int32, n)
	k := make([]int32, n)
	for i := range y {
		y[i] = int32(rng.Intn(9))
		k[i] = int32(rng.Intn(7))
	}
	tp, sc, sk := 0, 0, 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			sameY, sameK := y[a] == y[b], k[a] == k[b]
			if sameY {
				sc++
			}
			if sameK {
				sk++
			}
			if sameY && sameK {
				tp++
			}
		}
	}
	want := 2 * float64(tp) / float64(sc+sk)
	if got := mustCT(t, y, k).F1(); !near(got, want) {
		t.Errorf("F1 = %v, want %v", got, want)
	}
}

func BenchmarkAMI_SOPShape(b *testing.B) {
	// 60 502 items, 11 316 classes of 2–12 items, 11 316 clusters.
	rng := rand.New(rand.NewSource(1))
	var y, k []int32
	for c := 0; len(y) < 60502; c++ {
		size := 2 + rng.Intn(11)
		for i := 0; i < size && len(y) < 60502; i++ {
			y = append(y, int32(c))
			k = append(k, int32(rng.Intn(11316)))
		}
	}
	ct, _ := newContingency(y, k)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := ct.AMI(); math.IsNaN(v) || v > 1 {
			b.Fatalf("AMI = %v", v)
		}
	}
}
