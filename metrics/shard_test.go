package metrics

import (
	"context"
	"encoding/json"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// shardInputs are a leave-one-out set and a query/gallery split of
// integer-valued rows (exact distance ties, duplicate rows) or, gauss,
// noisy class centres in 24 dimensions (near-ties that strict ranks again
// in float64), classes of unequal sizes and a singleton; n is not a
// multiple of the 2048-query block.
func shardInputs(n int, gauss bool) map[string]Input {
	rng := rand.New(rand.NewSource(41))
	d := 4
	if gauss {
		d = 24
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.ExpFloat64()*12) % 40
	}
	x := make([]float32, n*d)
	for i := range x {
		if gauss {
			x[i] = float32(labels[i/d]%7) + 1.5*float32(rng.NormFloat64())
		} else {
			x[i] = float32(rng.Intn(5))
		}
	}
	labels[7] = 99 // a singleton class
	emb := mat32.Matrix{Rows: n, Cols: d, Data: x}
	half := n / 3
	q := mat32.Matrix{Rows: half, Cols: d, Data: x[:half*d]}
	g := mat32.Matrix{Rows: n - half, Cols: d, Data: x[half*d:]}
	return map[string]Input{
		"loo": {Emb: emb, Labels: labels},
		"qg":  {Emb: q, Labels: labels[:half], Gallery: &g, GalleryLabels: labels[half:]},
	}
}

// shardAndMerge evaluates in as count shards and merges them.
func shardAndMerge(t *testing.T, in Input, opt Options, count int) *Result {
	t.Helper()
	var parts []*Partial
	for i := count - 1; i >= 0; i-- { // any order
		p, err := EvaluateShard(context.Background(), in, opt, Shard{Index: i, Count: count})
		if err != nil {
			t.Fatalf("shard %d/%d: %v", i, count, err)
		}
		parts = append(parts, p)
	}
	res, err := Merge(context.Background(), in, opt, parts)
	if err != nil {
		t.Fatalf("merge of %d: %v", count, err)
	}
	return res
}

// sameResult fails unless a and b are equal bit for bit: their JSON
// without timings and their per-query values.
func sameResult(t *testing.T, what string, a, b *Result) {
	t.Helper()
	ja, jb := resultJSON(t, a), resultJSON(t, b)
	if ja != jb {
		t.Errorf("%s: merged result differs:\n%s\nsingle:\n%s", what, ja, jb)
	}
	if (a.PerQuery == nil) != (b.PerQuery == nil) {
		t.Fatalf("%s: per-query values in one result only", what)
	}
	if a.PerQuery == nil {
		return
	}
	pa, pb := a.PerQuery, b.PerQuery
	if strings.Join(pa.Keys, ",") != strings.Join(pb.Keys, ",") || len(pa.Index) != len(pb.Index) {
		t.Fatalf("%s: per-query keys %v vs %v, rows %d vs %d", what, pa.Keys, pb.Keys, len(pa.Index), len(pb.Index))
	}
	for j := range pa.Values {
		for i := range pa.Values[j] {
			if math.Float64bits(pa.Values[j][i]) != math.Float64bits(pb.Values[j][i]) || pa.Index[i] != pb.Index[i] || pa.Labels[i] != pb.Labels[i] {
				t.Fatalf("%s: per-query %s row %d: %v vs %v", what, pa.Keys[j], i, pa.Values[j][i], pb.Values[j][i])
			}
		}
	}
}

func resultJSON(t *testing.T, r *Result) string {
	t.Helper()
	c := *r
	c.Timings = nil
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Merged shards equal one Evaluate bit for bit: every convention,
// leave-one-out and query/gallery, per-query and per-class averaging,
// per-class and per-query values, 1, 2, 3, 7 and 16 shards.
func TestMergeEqualsEvaluate(t *testing.T) {
	t.Parallel()
	knnMetrics := []string{"R@k", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"}
	for _, gauss := range []bool{false, true} {
		for name, in := range shardInputs(2600, gauss) {
			for _, conv := range []Convention{Strict, Roth, PML} {
				for _, avg := range []Average{PerQuery, PerClass} {
					if conv == Roth && avg == PerClass {
						continue
					}
					opt := Options{Metrics: knnMetrics, Ks: []int{1, 4, 16}, Convention: conv, Average: avg, PerClass: true, PerQuery: true}
					if conv != Roth {
						opt.Metrics = append(opt.Metrics, "P@5", "MRR")
					}
					single := eval(t, in, opt)
					for _, count := range []int{1, 2, 3, 7, 16} {
						sameResult(t, name+" "+string(conv)+" "+string(avg)+" shards "+strconv.Itoa(count)+" gauss "+strconv.FormatBool(gauss), shardAndMerge(t, in, opt, count), single)
					}
				}
			}
		}
	}
}

// The merge computes the clustering and whole-embedding metrics once
// over every item, as Evaluate does.
func TestMergeClusteringMetrics(t *testing.T) {
	t.Parallel()
	in := shardInputs(900, true)["loo"]
	opt := Options{Convention: Strict}
	sameResult(t, "all metrics", shardAndMerge(t, in, opt, 3), eval(t, in, opt))
}

// Query rows (pml's ref_includes_query subset) shard as the rows of the
// one set do.
func TestMergeQueryRows(t *testing.T) {
	t.Parallel()
	in := shardInputs(1500, false)["loo"]
	for i := 0; i < in.Emb.Rows; i += 3 {
		in.QueryRows = append(in.QueryRows, i)
	}
	opt := Options{Metrics: []string{"R@k", "MAP@R"}, Ks: []int{1, 2}, Convention: PML, PerQuery: true}
	sameResult(t, "query rows", shardAndMerge(t, in, opt, 4), eval(t, in, opt))
}

// A merge refuses partials of other data, settings or versions and a
// missing or duplicated shard, naming what differs.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	in := shardInputs(600, false)["loo"]
	opt := Options{Metrics: []string{"R@k", "MAP@R"}, Ks: []int{1}}
	ctx := context.Background()
	shard := func(i, n int, in Input, opt Options) *Partial {
		p, err := EvaluateShard(ctx, in, opt, Shard{Index: i, Count: n})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := shard(0, 3, in, opt), shard(1, 3, in, opt), shard(2, 3, in, opt)
	other := in
	other.Emb = mat32.Matrix{Rows: in.Emb.Rows, Cols: in.Emb.Cols, Data: append([]float32(nil), in.Emb.Data...)}
	other.Emb.Data[5] += 1
	roth := opt
	roth.Convention = Roth
	v2 := *b
	v2.Version = PartialVersion + 1
	cases := []struct {
		name  string
		parts []*Partial
		want  string
	}{
		{"missing", []*Partial{a, c}, "shard(s) 1 of 3 missing"},
		{"duplicate", []*Partial{a, b, b, c}, "shard(s) 1 of 3 given more than once"},
		{"other count", []*Partial{a, b, shard(1, 2, in, opt)}, "partials of 3 and of 2 shards"},
		{"other data", []*Partial{a, shard(1, 3, other, opt), c}, "other data: queries differs"},
		{"other settings", []*Partial{a, shard(1, 3, in, roth), c}, "--compat \"roth\", here \"strict\""},
		{"other version", []*Partial{a, &v2, c}, "format version 2"},
		{"none", nil, "no partial results"},
	}
	for _, tc := range cases {
		_, err := Merge(ctx, in, opt, tc.parts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := EvaluateShard(ctx, in, opt, Shard{Index: 3, Count: 3}); err == nil {
		t.Error("shard 3/3 accepted")
	}
	if _, err := EvaluateShard(ctx, in, Options{Metrics: []string{"NMI"}}, Shard{Count: 2}); err == nil {
		t.Error("a shard without k-NN metrics accepted")
	}
}

// Shard boundaries cover every row once, in order.
func TestShardRows(t *testing.T) {
	for _, n := range []int{0, 1, 5, 2048, 4500} {
		for _, count := range []int{1, 2, 3, 7, 16} {
			next := 0
			for i := range count {
				lo, hi := Shard{i, count}.Rows(n)
				if lo != next || hi < lo {
					t.Fatalf("n=%d %d/%d: rows %d…%d after %d", n, i, count, lo, hi, next)
				}
				next = hi
			}
			if next != n {
				t.Fatalf("n=%d count=%d: rows end at %d", n, count, next)
			}
		}
	}
}
