package losses

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// refSiMix computes RS@k (simix = true) or Smooth-AP with SiMix directly
// from Patel et al. 2024 eqs. 5–10: the similarity of two (original or virtual)
// examples is the bilinear mix of the original cosine similarities.
func refSiMix(b Batch, rs bool, seed int64, ks []int, tau1, tau2 float64) float64 {
	sm, err := newSimix(b.Labels, rand.New(rand.NewSource(seed)))
	if err != nil {
		panic(err)
	}
	u := unitRows(b.Emb, b.B, b.D)
	S := gram(u, b.B, u, b.B, b.D)
	n := b.B + sm.V
	// s(i, j) = Σ_ab M_ia M_jb S_ab (eqs. 9–10)
	s := func(i, j int) float64 {
		v := 0.0
		for a := 0; a < b.B; a++ {
			for c := 0; c < b.B; c++ {
				v += sm.mix[i*b.B+a] * sm.mix[j*b.B+c] * S[a*b.B+c]
			}
		}
		return v
	}
	sig := func(x, tau float64) float64 { return 1 / (1 + math.Exp(-x/tau)) }
	y := sm.labels
	total, queries := 0.0, 0
	for q := 0; q < n; q++ {
		var pos []int
		for x := 0; x < n; x++ {
			if x != q && y[x] == y[q] {
				pos = append(pos, x)
			}
		}
		if len(pos) == 0 {
			continue
		}
		queries++
		rank := func(x int, onlyPos bool) float64 {
			r := 0.0
			for z := 0; z < n; z++ {
				if z != q && z != x && (!onlyPos || y[z] == y[q]) {
					r += sig(s(q, z)-s(q, x), tau2)
				}
			}
			return r
		}
		if rs {
			lq := 0.0
			for _, k := range ks {
				num := 0.0
				for _, x := range pos {
					num += sig(float64(k-1)-rank(x, false), tau1)
				}
				lq += 1 - math.Min(num, float64(k))/float64(min(k, len(pos)))
			}
			total += lq / float64(len(ks))
		} else {
			ap := 0.0
			for _, x := range pos {
				ap += (1 + rank(x, true)) / (1 + rank(x, false))
			}
			total += 1 - ap/float64(len(pos))
		}
	}
	return total / float64(queries)
}

func TestSiMixVirtualBatch(t *testing.T) {
	labels := []int{0, 1, 0, 2, 0, 1}
	sm, err := newSimix(labels, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	// class 0 has 3 members (3 pairs), class 1 two (1 pair), class 2 none.
	if sm.V != 4 || len(sm.labels) != 10 {
		t.Fatalf("V = %d, %d labels; want 4, 10", sm.V, len(sm.labels))
	}
	want := []int{0, 0, 1, 0} // pairs (0,2), (0,4), (1,5), (2,4) in index order
	for k, y := range want {
		if sm.labels[6+k] != y {
			t.Fatalf("virtual labels %v, want %v", sm.labels[6:], want)
		}
		row := sm.mix[(6+k)*6 : (7+k)*6]
		sum, nz := 0.0, 0
		for _, v := range row {
			sum += v
			if v != 0 {
				nz++
			}
		}
		if math.Abs(sum-1) > 1e-12 || nz != 2 {
			t.Fatalf("virtual row %d = %v: want two weights α, 1−α", k, row)
		}
	}
	if _, err := newSimix(labels, nil); err == nil {
		t.Fatal("simix without a random source accepted")
	}
	if ks := fmt.Sprint(simixKs(32)); ks != "[1 2 4 8 12 16 20 24 28 32]" {
		t.Fatalf("K with SiMix = %s, want the paper's {1,2,4,8,12,…,32}", ks)
	}
}

func TestSiMixMatchesReference(t *testing.T) {
	const B, D, C, seed = 8, 5, 3, 5
	b := randomBatch(21, B, D, C)
	for _, name := range []string{"recallk", "smoothap"} {
		l := newLoss(t, name, Config{Dim: D, Hyper: map[string]float64{"simix": 1}})
		got := lossAt(t, l, b, seed)
		var want float64
		if name == "recallk" {
			want = refSiMix(b, true, seed, simixKs(32), 1, 0.01)
		} else {
			want = refSiMix(b, false, seed, nil, 0, 0.01)
		}
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("%s with SiMix: graph %.12g, reference %.12g", name, got, want)
		}
		plain := lossAt(t, newLoss(t, name, Config{Dim: D}), b, seed)
		if got == plain {
			t.Fatalf("%s: SiMix did not change the loss", name)
		}
	}
}

func TestSiMixGradients(t *testing.T) {
	const B, D, C = 8, 5, 3
	for _, tc := range []struct {
		name  string
		hyper map[string]float64
	}{
		{"recallk", map[string]float64{"simix": 1, "tau2": 0.05}},
		{"recallk", map[string]float64{"simix": 1, "k_max": 4, "tau2": 0.1}},
		{"smoothap", map[string]float64{"simix": 1, "tau": 0.1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoss(t, tc.name, Config{Dim: D, Hyper: tc.hyper})
			gradCheck(t, l, randomBatch(31, B, D, C), 9)
		})
	}
}
