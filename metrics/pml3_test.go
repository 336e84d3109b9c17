package metrics

import (
	"context"
	"math"
	"testing"
)

// pytorch-metric-learning v2.8.1 scores a set whose items share one label:
// every neighbour matches, and NMI = AMI = 1 (scikit-learn's value for one
// class in one cluster). Strict refuses it.
func TestPMLOneLabel(t *testing.T) {
	in := Input{Emb: col(1, 2, 3, 5), Labels: []int32{7, 7, 7, 7}}
	res, err := Evaluate(context.Background(), in, Options{Convention: PML, Metrics: []string{"NMI", "AMI", "R@1", "MAP@R", "R-Precision", "MRR"}, Ks: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range res.Metrics {
		if math.Abs(v-1) > 1e-12 {
			t.Errorf("%s = %v, want 1", k, v)
		}
	}
	if _, err := Evaluate(context.Background(), in, Options{Metrics: []string{"R@1"}, Ks: []int{1}}); err == nil {
		t.Error("strict scored a one-label set")
	}
}

// pml3 scores as pml (no documented version 3 change alters these
// metrics) and says which convention it was.
func TestPML3ScoresAsPML(t *testing.T) {
	in := Input{Emb: col(0, 1, 2, 10, 11, 13, 30), Labels: []int32{0, 1, 0, 1, 1, 0, 2}}
	opt := Options{Metrics: []string{"R@1", "MAP@R", "R-Precision", "MRR", "mean_average_precision", "NMI", "AMI"}, Ks: []int{1}}
	opt.Convention = PML
	a, err := Evaluate(context.Background(), in, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Convention = PML3
	b, err := Evaluate(context.Background(), in, opt)
	if err != nil {
		t.Fatal(err)
	}
	if b.Convention != PML3 || a.Convention != PML {
		t.Errorf("conventions %q, %q", a.Convention, b.Convention)
	}
	for k, v := range a.Metrics {
		if b.Metrics[k] != v && !(math.IsNaN(v) && math.IsNaN(b.Metrics[k])) {
			t.Errorf("%s: pml %v, pml3 %v", k, v, b.Metrics[k])
		}
	}
}
