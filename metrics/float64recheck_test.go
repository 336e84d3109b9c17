package metrics

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// hardF32Inputs are embeddings on which float32 distances nearly tie or
// cancel, all good data: classes collapsed to points, tight classes on
// the unit sphere (σ = 0.005, 0.01), unit rows with one row of norm 10³,
// classes of norm 10⁶, and unit rows far from the origin.
func hardF32Inputs() map[string]Input {
	rng := rand.New(rand.NewSource(29))
	unit := func(row []float32) {
		var s float64
		for _, v := range row {
			s += float64(v) * float64(v)
		}
		for t := range row {
			row[t] = float32(float64(row[t]) / math.Sqrt(s))
		}
	}
	classes := func(n, d, c int, sigma, scale float64, norm bool) Input {
		centres := make([]float64, c*d)
		for i := range centres {
			centres[i] = rng.NormFloat64()
		}
		x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
		labels := make([]int32, n)
		for i := 0; i < n; i++ {
			labels[i] = int32(i % c)
			row := x.Row(i)
			var s float64
			for t := range row {
				s += centres[int(labels[i])*d+t] * centres[int(labels[i])*d+t]
			}
			for t := range row {
				row[t] = float32(centres[int(labels[i])*d+t]/math.Sqrt(s) + sigma*rng.NormFloat64())
			}
			if norm {
				unit(row)
			}
			for t := range row {
				row[t] = float32(float64(row[t]) * scale)
			}
		}
		return Input{Emb: x, Labels: labels}
	}
	out := map[string]Input{
		"collapsed":   classes(300, 32, 10, 0, 1, true),
		"tight 0.005": classes(600, 64, 20, 0.005, 1, true),
		"tight 0.01":  classes(600, 64, 20, 0.01, 1, true),
		"norm 1e6":    classes(400, 32, 8, 0.05, 1e6, false),
	}
	o := classes(2000, 64, 25, 0.12, 1, true)
	row := o.Emb.Row(7)
	for t := range row {
		row[t] *= 1000
	}
	out["outlier 1e3"] = o
	// Unit rows shifted by 300 in every coordinate: ‖x‖ ≈ 2400 against
	// distances of ≈ 0.1: float32 keeps about 5 bits of them.
	f := classes(500, 64, 10, 0.05, 1, true)
	for i := range f.Emb.Data {
		f.Emb.Data[i] += 300
	}
	out["offset 300"] = f
	return out
}

// ref64 scores leave-one-out R@k and MAP@R (no lone queries) from a
// float64 ranking: differences squared and summed in float64, ties to the
// lower index.
func ref64(in Input, ks []int) map[string]float64 {
	n := in.Emb.Rows
	out := map[string]float64{}
	size := map[int32]int{}
	for _, l := range in.Labels {
		size[l]++
	}
	var mapR float64
	recall := make([]float64, len(ks))
	for i := 0; i < n; i++ {
		type c struct {
			d  float64
			id int
		}
		var cs []c
		for j := 0; j < n; j++ {
			if j != i {
				cs = append(cs, c{knn.SquaredL2(in.Emb.Row(i), in.Emb.Row(j)), j})
			}
		}
		slices.SortFunc(cs, func(a, b c) int {
			if a.d != b.d {
				if a.d < b.d {
					return -1
				}
				return 1
			}
			return a.id - b.id
		})
		rel := func(p int) bool { return in.Labels[cs[p].id] == in.Labels[i] }
		for m, k := range ks {
			for p := 0; p < k; p++ {
				if rel(p) {
					recall[m]++
					break
				}
			}
		}
		r := size[in.Labels[i]] - 1
		hits, ap := 0, 0.0
		for p := 0; p < r; p++ {
			if rel(p) {
				hits++
				ap += float64(hits) / float64(p+1)
			}
		}
		mapR += ap / float64(r)
	}
	for m, k := range ks {
		out[fmt.Sprintf("R@%d", k)] = recall[m] / float64(n)
	}
	out["MAP@R"] = mapR / float64(n)
	return out
}

// TestStrictScoresHardFloat32: strict scores these inputs (no error, no
// float32 warning) with the retrieval metrics of a float64 ranking, and
// clusters classes collapsed to points perfectly. (Tight classes may share
// an initial centroid: a k-means optimum, not rounding; Recheck64's tests
// compare assignments with float64.)
func TestStrictScoresHardFloat32(t *testing.T) {
	t.Parallel()
	for name, in := range hardF32Inputs() {
		res, err := Evaluate(context.Background(), in, Options{Convention: Strict, Metrics: []string{"R@1", "R@4", "MAP@R", "NMI"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, w := range res.Warnings {
			if strings.Contains(w, "float32") {
				t.Errorf("%s: warning %q", name, w)
			}
		}
		for k, want := range ref64(in, []int{1, 4}) {
			if got := res.Metrics[k]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: %s = %.15g, float64 reference %.15g", name, k, got, want)
			}
		}
		if name == "collapsed" && (res.Metrics["R@1"] != 1 || res.Metrics["NMI"] != 1) {
			t.Errorf("%s: R@1 %v NMI %v, want 1", name, res.Metrics["R@1"], res.Metrics["NMI"])
		}
		if strings.HasPrefix(name, "tight") && res.Metrics["R@1"] != 1 {
			t.Errorf("%s: R@1 %v, want 1", name, res.Metrics["R@1"])
		}
	}
}

// TestHardFloat32KernelsIdentical runs the strict evaluation of
// hardF32Inputs in a child process per kernel level this CPU offers
// (DMLBENCH_KERNEL) and requires the same metrics, bit for bit.
func TestHardFloat32KernelsIdentical(t *testing.T) {
	if os.Getenv("DMLBENCH_HARDF32_CHILD") != "" {
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range hardF32Inputs() {
				if !yield(k) {
					return
				}
			}
		}) {
			res, err := Evaluate(context.Background(), hardF32Inputs()[name], Options{Convention: Strict, Metrics: []string{"R@1", "R@4", "MAP@R", "mAP@1000", "NMI", "AMI"}})
			if err != nil {
				fmt.Printf("%s: %v\n", name, err)
				continue
			}
			for _, k := range Keys(res.Metrics) {
				fmt.Printf("%s %s %x\n", name, k, math.Float64bits(res.Metrics[k]))
			}
		}
		return
	}
	if testing.Short() {
		t.Skip("-short: one child process per kernel level")
	}
	var first, firstOut string
	for _, l := range []kernelsel.Level{kernelsel.Portable, kernelsel.AVX2, kernelsel.AVX512} {
		if !kernelsel.Supported(l) {
			continue
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHardFloat32KernelsIdentical$", "-test.count=1")
		cmd.Env = append(os.Environ(), "DMLBENCH_HARDF32_CHILD=1", kernelsel.EnvVar+"="+l.String())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", l, err, out)
		}
		if first == "" {
			first, firstOut = l.String(), string(out)
			continue
		}
		if string(out) != firstOut {
			t.Errorf("kernel %s differs from %s:\n%s\nvs\n%s", l, first, out, firstOut)
		}
	}
}

// TestListRanks checks the watched ranks after a reorder within a list,
// with the watched rows given in any order: listed watched rows take
// their positions within maxRank, ranks beyond the list stay.
func TestListRanks(t *testing.T) {
	ids := []int32{7, 3, 9, -1}
	old := []int32{1, 2, 6, 8}
	for _, watched := range [][]int32{{3, 5, 7}, {7, 5, 3}} {
		if got := listRanks(ids, watched, old, 10); !slices.Equal(got, []int32{1, 2, 6, 8}) {
			t.Fatalf("watched %v: ranks %v, want [1 2 6 8]", watched, got)
		}
		if got := listRanks(ids, watched, old, 1); !slices.Equal(got, []int32{1, 6, 8}) {
			t.Fatalf("watched %v, maxRank 1: ranks %v, want [1 6 8]", watched, got)
		}
		if !slices.Equal(watched, []int32{3, 5, 7}) && !slices.Equal(watched, []int32{7, 5, 3}) {
			t.Fatalf("watched rows reordered in place: %v", watched)
		}
	}
	if got := listRanks([]int32{4, 2}, []int32{9, 2}, nil, 5); !slices.Equal(got, []int32{2}) {
		t.Fatalf("ranks %v, want [2]", got)
	}
}
