package metrics

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestSklearnGolden compares NMI, AMI and pair-counting F1 with scikit-learn's values on seeded
// random labelings (testdata/sklearn_golden.json, written by
// testdata/sklearn_golden.py): from 10 items to 2 000 items × 400 classes,
// one cluster per item, and near-independent labelings where AMI ≈ 0.
func TestSklearnGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/sklearn_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Labels, Clusters []int32
			NMI, AMI, F1     float64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	for i, c := range g.Cases {
		ct, err := newContingency(c.Labels, c.Clusters)
		if err != nil {
			t.Fatal(err)
		}
		if got := ct.NMI(); math.Abs(got-c.NMI) > 1e-12 {
			t.Errorf("case %d (n=%d): NMI %.15g, sklearn %.15g", i, len(c.Labels), got, c.NMI)
		}
		if got := ct.F1(); math.Abs(got-c.F1) > 1e-12 {
			t.Errorf("case %d (n=%d): F1 %.15g, sklearn pair counts %.15g", i, len(c.Labels), got, c.F1)
		}
		if got := ct.AMI(); math.Abs(got-c.AMI) > 1e-9 {
			t.Errorf("case %d (n=%d): AMI %.15g, sklearn %.15g", i, len(c.Labels), got, c.AMI)
		}
	}
}

// TestClusterMetricsBitIdentical: NMI, AMI and F1 are sums over the
// contingency cells and the marginal values; they must come out bit for bit
// the same on every call (Go's map order is random, the summation order is
// not allowed to be).
func TestClusterMetricsBitIdentical(t *testing.T) {
	n := 3000
	y, z := make([]int32, n), make([]int32, n)
	for i := range y {
		y[i] = int32(i*7919%601) % 300
		z[i] = int32(i*104729%997) % 250
	}
	var first [3]float64
	for r := 0; r < 20; r++ {
		ct, err := newContingency(y, z)
		if err != nil {
			t.Fatal(err)
		}
		got := [3]float64{ct.NMI(), ct.AMI(), ct.F1()}
		if r == 0 {
			first = got
		} else if got != first {
			t.Fatalf("call %d: NMI, AMI, F1 = %v, first call %v", r, got, first)
		}
	}
}
