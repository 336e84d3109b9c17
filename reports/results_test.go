package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/metrics"
)

// TestResultColumns: mAP@C shares MAP@R's column (its descriptor's SameAs)
// only when every result holds the same value for both, bit for bit; a
// metric of pml's window carries its k; the unit rule and the value
// formats follow the descriptors.
func TestResultColumns(t *testing.T) {
	res := func(mapR, mapC float64) *metrics.Result {
		return &metrics.Result{Metrics: map[string]float64{"R@1": 0.5, "MAP@R": mapR, "mAP@C": mapC, "rho": 0.25, metrics.PMLMAPKey: 0.125}, Gallery: 99}
	}
	titles := func(rs ...*metrics.Result) string {
		var named []NamedResult
		for _, r := range rs {
			named = append(named, NamedResult{"x", r})
		}
		_, ts := columnKeys(resultColumns(named))
		return strings.Join(ts, " | ")
	}
	if got := titles(res(0.3, 0.3), res(0.4, 0.4)); got != "R@1 | MAP@R = mAP@C | rho | mean_average_precision@99" {
		t.Errorf("equal: %q", got)
	}
	if got := titles(res(0.3, 0.3), res(0.4, math.Nextafter(0.4, 1))); got != "R@1 | mAP@C | MAP@R | rho | mean_average_precision@99" {
		t.Errorf("one differs: %q", got)
	}
	r := res(0.3, 0.3)
	r.PMLK = 5
	if got := metrics.Title(metrics.PMLMAPKey, r); got != "mean_average_precision@5" {
		t.Errorf("--pml-k 5: %q", got)
	}
	for _, c := range []struct{ key, want string }{{"R@1", "12.35"}, {"rho", "0.1235"}, {"P@5", "12.35"}, {"loss", "0.1235"}} {
		if got := FormatMetric(c.key, 0.12345); got != c.want {
			t.Errorf("FormatMetric(%s) = %q, want %q", c.key, got, c.want)
		}
	}
	if got := FormatMetricUnit("MAP@R", 0.4512); got != "45.12%" {
		t.Errorf("FormatMetricUnit = %q", got)
	}
	if got := FormatMetric("R@1", math.NaN()); got != "n/a" {
		t.Errorf("NaN: %q", got)
	}
	var b bytes.Buffer
	if err := WriteResults(&b, []NamedResult{{"a_b|c", res(0.3, 0.3)}}, "markdown"); err != nil {
		t.Fatal(err)
	}
	if want := "| a\\_b\\|c | 50.00 | 30.00 | 0.2500 | 12.50 |\n"; !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "mean\\_average\\_precision@99") {
		t.Errorf("markdown:\n%s", b.String())
	}
}

func TestCheckResultOutputs(t *testing.T) {
	if err := CheckResultOutputs("markdown", 3, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := CheckResultOutputs("json", 1, "r.json", "run"); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		format      string
		files       int
		out, refine string
	}{{"jsn", 1, "", ""}, {"json", 2, "", ""}, {"table", 2, "r.json", ""}, {"table", 2, "", "run"}} {
		if err := CheckResultOutputs(a.format, a.files, a.out, a.refine); !usage.Is(err) {
			t.Errorf("%+v: %v", a, err)
		}
	}
}
