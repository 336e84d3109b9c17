// Package audit checks a train/test split for leakage before a benchmark
// table is built on it (dmlbench data audit): test rows that repeat a
// training row exactly or nearly, found by a 1-NN search of every test row
// among the training rows, and class names present in both splits (an
// open-set benchmark has none).
package audit

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/knn"
)

// DefaultNear is the default near-duplicate threshold on the relative
// distance ‖x − y‖ / max(‖x‖, ‖y‖): 5 % of the longer row's norm.
const DefaultNear = 0.05

// Pair is a test row and its nearest training row.
type Pair struct {
	Test, Train           int
	TestClass, TrainClass string
	// Rel is ‖x − y‖ / max(‖x‖, ‖y‖) (0 for two zero rows).
	Rel float64
}

// Report is the outcome of Run.
type Report struct {
	Name                      string
	TrainRows, TestRows       int
	TrainClasses, TestClasses int
	Dim                       int
	Near                      float64 // the threshold used
	// Shared are the class names present in both splits, sorted.
	Shared []string
	// Exact are the test rows equal bit for bit to a training row; Close
	// those within the threshold but not equal, closest first.
	Exact, Close []Pair
	// MedianRel is the median over test rows of the relative distance to
	// the nearest training row: the scale Near is read against.
	MedianRel float64
}

// Run audits the split: near is the relative-distance threshold (> 0).
func Run(ctx context.Context, name string, train, test fixtures.Split, near float64, threads int) (*Report, error) {
	switch {
	case !(near > 0):
		return nil, fmt.Errorf("audit: near-duplicate threshold %v must be positive", near)
	case train.X.Rows == 0 || test.X.Rows == 0:
		return nil, fmt.Errorf("audit: %s has %d training and %d test rows; the audit needs both splits", name, train.X.Rows, test.X.Rows)
	case train.X.Cols != test.X.Cols:
		return nil, fmt.Errorf("audit: training rows have %d values, test rows %d", train.X.Cols, test.X.Cols)
	}
	r := &Report{Name: name, TrainRows: train.X.Rows, TestRows: test.X.Rows, TrainClasses: train.NumClasses(),
		TestClasses: test.NumClasses(), Dim: train.X.Cols, Near: near}
	inTrain := map[string]bool{}
	for _, n := range train.ClassNames {
		inTrain[n] = true
	}
	for _, n := range test.ClassNames {
		if inTrain[n] {
			r.Shared = append(r.Shared, n)
		}
	}
	sort.Strings(r.Shared)
	// Exact duplicates: equal bits, found through a hash of each row.
	byHash := map[uint64][]int{}
	for i := 0; i < train.X.Rows; i++ {
		h := rowHash(train.X.Row(i))
		byHash[h] = append(byHash[h], i)
	}
	exact := make([]bool, test.X.Rows)
	for i := 0; i < test.X.Rows; i++ {
		row := test.X.Row(i)
		for _, j := range byHash[rowHash(row)] {
			if sameBits(row, train.X.Row(j)) {
				exact[i] = true
				r.Exact = append(r.Exact, Pair{Test: i, Train: j, TestClass: className(test, i), TrainClass: className(train, j)})
				break
			}
		}
	}
	nb, err := knn.Exact{}.Search(ctx, test.X, train.X, 1, knn.Options{Metric: knn.L2, Threads: threads})
	if err != nil {
		return nil, err
	}
	rels := make([]float64, test.X.Rows)
	for i := range rels {
		j := int(nb.IDs[i])
		rels[i] = relDistance(test.X.Row(i), train.X.Row(j))
		if exact[i] {
			rels[i] = 0
			continue
		}
		if rels[i] <= near {
			r.Close = append(r.Close, Pair{Test: i, Train: j, TestClass: className(test, i), TrainClass: className(train, j), Rel: rels[i]})
		}
	}
	sort.SliceStable(r.Close, func(a, b int) bool { return r.Close[a].Rel < r.Close[b].Rel })
	sorted := slices.Clone(rels)
	slices.Sort(sorted)
	r.MedianRel = sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		r.MedianRel = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return r, nil
}

// relDistance is ‖x − y‖ / max(‖x‖, ‖y‖) in float64 (0 when both are 0).
func relDistance(x, y []float32) float64 {
	var d, nx, ny float64
	for k := range x {
		a, b := float64(x[k]), float64(y[k])
		d += (a - b) * (a - b)
		nx += a * a
		ny += b * b
	}
	if m := math.Max(nx, ny); m > 0 {
		return math.Sqrt(d / m)
	}
	return 0
}

// rowHash is FNV-1a over the row's float32 bit patterns, one 32-bit
// word at a time.
func rowHash(row []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range row {
		h ^= uint64(math.Float32bits(v))
		h *= 1099511628211
	}
	return h
}

// sameBits reports whether two rows are equal bit for bit.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

func className(s fixtures.Split, i int) string {
	if y := int(s.Labels[i]); y >= 0 && y < len(s.ClassNames) {
		return s.ClassNames[y]
	}
	return fmt.Sprint(s.Labels[i])
}

// Leaks reports whether the audit found anything.
func (r *Report) Leaks() bool { return len(r.Shared)+len(r.Exact)+len(r.Close) > 0 }

// Write prints the one-screen report: at most `show` examples per finding.
func (r *Report) Write(w io.Writer, show int) {
	fmt.Fprintf(w, "%s: train %d rows in %d classes, test %d rows in %d classes, %d values per row\n",
		r.Name, r.TrainRows, r.TrainClasses, r.TestRows, r.TestClasses, r.Dim)
	mark := func(n int) string {
		if n == 0 {
			return "ok  "
		}
		return "LEAK"
	}
	fmt.Fprintf(w, "%s classes in both splits: %d", mark(len(r.Shared)), len(r.Shared))
	if len(r.Shared) > 0 {
		fmt.Fprintf(w, " (%s%s)", strings.Join(r.Shared[:min(show, len(r.Shared))], ", "), more(len(r.Shared), show))
	}
	fmt.Fprintln(w)
	pairs := func(ps []Pair) {
		for _, p := range ps[:min(show, len(ps))] {
			same := "other class"
			if p.TestClass == p.TrainClass {
				same = "same class"
			}
			fmt.Fprintf(w, "       test row %d (class %s) ~ train row %d (class %s, %s), relative distance %.4f\n",
				p.Test, p.TestClass, p.Train, p.TrainClass, same, p.Rel)
		}
		if len(ps) > show {
			fmt.Fprintf(w, "       … %d more\n", len(ps)-show)
		}
	}
	fmt.Fprintf(w, "%s test rows equal to a training row (bit for bit): %d\n", mark(len(r.Exact)), len(r.Exact))
	pairs(r.Exact)
	fmt.Fprintf(w, "%s test rows within %.3g of a training row (‖x − y‖ / max(‖x‖, ‖y‖), exact ones aside): %d\n", mark(len(r.Close)), r.Near, len(r.Close))
	pairs(r.Close)
	fmt.Fprintf(w, "median relative distance of a test row to its nearest training row: %.4f (exact 1-NN search, L2)\n", r.MedianRel)
}

func more(n, show int) string {
	if n > show {
		return fmt.Sprintf(", … %d more", n-show)
	}
	return ""
}
