package distractors

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports/compare"
)

// A hand-made case: one query of class 0 at the origin; its positive at
// distance 2; distractors (class 5) at distances 1, 3 and 4. R@1 is 1 at
// gallery size 1 … and 0 once the distractor at distance 1 is in.
func TestCurveHandComputed(t *testing.T) {
	q := mat32.Matrix{Rows: 1, Cols: 1, Data: []float32{0}}
	g := mat32.Matrix{Rows: 4, Cols: 1, Data: []float32{3, 2, 1, 4}}
	in := metrics.Input{Emb: q, Labels: []int32{0}, Gallery: &g, GalleryLabels: []int32{5, 0, 5, 5}}
	c, err := Run(context.Background(), in, metrics.Options{Metrics: []string{"R@1"}, Ks: []int{1}},
		Options{Sizes: []int{4, 1}, Seed: 1, Interval: compare.Options{Resamples: 50, Level: 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Relevant != 1 || c.Distractors != 3 || len(c.Points) != 2 {
		t.Fatalf("%+v", c)
	}
	if p := c.Points[0]; p.Size != 1 || p.Distractors != 0 || p.Metrics["R@1"] != 1 {
		t.Errorf("size 1: %+v", p)
	}
	if p := c.Points[1]; p.Size != 4 || p.Metrics["R@1"] != 0 {
		t.Errorf("size 4: %+v", p)
	}
	if _, err := Run(context.Background(), in, metrics.Options{}, Options{Sizes: []int{5}}); err == nil {
		t.Error("a size beyond the gallery accepted")
	}
	if _, err := Run(context.Background(), metrics.Input{Emb: g, Labels: []int32{1, 1, 2, 2}}, metrics.Options{}, Options{Sizes: []int{2}}); err == nil {
		t.Error("leave-one-out accepted")
	}
}

// Subsets are nested and keep every relevant item; the largest size is
// the whole gallery's evaluation; the metrics fall as distractors come in
// here (well-separated classes, distractors near the queries).
func TestCurveNestedAndWhole(t *testing.T) {
	n, d := 1200, 4
	g := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	gl := make([]int32, n)
	for i := range gl {
		gl[i] = int32(i % 30) // classes 0…9 are the queries'; 10…29 distractors
		for j := 0; j < d; j++ {
			g.Data[i*d+j] = float32((int(gl[i])*7+j*3)%11) + float32((i*13+j*5)%17)/4
		}
	}
	q := mat32.Matrix{Cols: d}
	var ql []int32
	for i := 0; len(ql) < 40; i++ {
		if gl[i] < 10 {
			q.Data = append(q.Data, g.Data[i*d:(i+1)*d]...)
			q.Data[len(q.Data)-1] += 0.5 // not a copy of a gallery row
			ql = append(ql, gl[i])
		}
	}
	q.Rows = len(ql)
	in := metrics.Input{Emb: q, Labels: ql, Gallery: &g, GalleryLabels: gl}
	opt := metrics.Options{Metrics: []string{"R@1", "MAP@R"}, Ks: []int{1}}
	c, err := Run(context.Background(), in, opt, Options{Sizes: []int{400, 800, 1200}, Seed: 3, Interval: compare.Options{Resamples: 200, Level: 0.95}})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := metrics.Evaluate(context.Background(), in, opt)
	if err != nil {
		t.Fatal(err)
	}
	last := c.Points[len(c.Points)-1]
	for k, v := range whole.Metrics {
		if last.Metrics[k] != v {
			t.Errorf("%s at the whole gallery: %v, Evaluate %v", k, last.Metrics[k], v)
		}
		if lo, hi := last.Lo[k], last.Hi[k]; !(lo <= v && v <= hi) {
			t.Errorf("%s: %v outside its interval [%v, %v]", k, v, lo, hi)
		}
	}
	if c.Relevant != 400 || c.Points[0].Distractors != 0 {
		t.Fatalf("relevant %d, first point %+v", c.Relevant, c.Points[0])
	}
	for i := 1; i < len(c.Points); i++ {
		if a, b := c.Points[i-1].Metrics["MAP@R"], c.Points[i].Metrics["MAP@R"]; b > a {
			t.Errorf("MAP@R rose from %v to %v with more distractors", a, b)
		}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&buf)
	if err != nil || len(back.Points) != 3 || back.Points[2].Metrics["R@1"] != last.Metrics["R@1"] {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	buf.Reset()
	if err := WriteTable(&buf, c); err != nil || !strings.Contains(buf.String(), "1200") {
		t.Fatalf("table: %v\n%s", err, buf.String())
	}
	s := Series(c, nil)
	if len(s) != 2 || len(s[0].X) != 3 || math.IsNaN(s[0].Y[0]) {
		t.Fatalf("series %+v", s)
	}
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("1e2, 1000,,20")
	if err != nil || len(got) != 3 || got[0] != 100 || got[1] != 1000 || got[2] != 20 {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"0", "1.5", "x"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
