package metrics

import (
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestOptionsText(t *testing.T) {
	if ks, err := ParseKs(" 1, 2,,8"); err != nil || !slices.Equal(ks, []int{1, 2, 8}) {
		t.Fatalf("ParseKs: %v, %v", ks, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-3"} {
		if _, err := ParseKs(bad); !usage.Is(err) {
			t.Errorf("ParseKs(%q): %v, want a usage error", bad, err)
		}
	}
	if k := IgnoredK([]string{"R@1", "MAP@R"}, []int{1, 4}); k != 4 {
		t.Errorf("IgnoredK = %d, want 4", k)
	}
	if k := IgnoredK([]string{"R@k"}, []int{1, 4}); k != 0 {
		t.Errorf("IgnoredK with R@k = %d, want 0", k)
	}
	if err := CheckPerClass("NMI"); !usage.Is(err) {
		t.Errorf("CheckPerClass(NMI): %v", err)
	}
	for _, ok := range []string{"", "NMI, MAP@R", "R@k", "nosuch"} {
		if err := CheckPerClass(ok); err != nil {
			t.Errorf("CheckPerClass(%q): %v", ok, err)
		}
	}
	if ks, p, err := ResolveProtocol("CUB", nil, false, false); err != nil || p == nil || !slices.Equal(ks, p.Ks) {
		t.Fatalf("ResolveProtocol(CUB): %v %v %v", ks, p, err)
	}
	for _, tc := range []struct {
		name  string
		ks    []int
		given bool
		qg    bool
	}{{"nosuch", nil, false, false}, {"cub", []int{3}, true, false}, {"cub", nil, false, true}, {"inshop", nil, false, false}} {
		if _, _, err := ResolveProtocol(tc.name, tc.ks, tc.given, tc.qg); !usage.Is(err) {
			t.Errorf("ResolveProtocol(%+v): %v", tc, err)
		}
	}
	if a, err := ParseAverage("per_class"); err != nil || a != PerClass {
		t.Errorf("ParseAverage: %v %v", a, err)
	}
	if _, err := ParseAverage("mean"); !usage.Is(err) {
		t.Errorf("ParseAverage(mean): %v", err)
	}
	if k, err := ParsePMLK("MAX_BIN_COUNT", PML); err != nil || k != PMLKMaxBinCount {
		t.Errorf("ParsePMLK: %d %v", k, err)
	}
	if _, err := ParsePMLK("5", Strict); !usage.Is(err) {
		t.Errorf("ParsePMLK under strict: %v", err)
	}
	if _, err := ParsePMLK("0", PML); !usage.Is(err) {
		t.Errorf("ParsePMLK(0): %v", err)
	}
}
