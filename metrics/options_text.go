package metrics

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/internal/usage"
)

// The options of an evaluation as the command line gives them, as text:
// each parser returns a usage error (internal/usage) naming the flag.

// ParseKs reads a comma-separated list of positive recall ks ("1,2,4,8").
func ParseKs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return nil, usage.Errorf("--k: %q is not a positive integer", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, usage.Errorf("--k: empty list")
	}
	return out, nil
}

// IgnoredK returns a k of ks that a metric list would not compute (it
// names neither the R@k family nor R@k itself), or 0.
func IgnoredK(names []string, ks []int) int {
	asked := map[string]bool{}
	for _, n := range names {
		key, _ := Canonical(n)
		if key == "R@k" {
			return 0
		}
		asked[key] = true
	}
	for _, k := range ks {
		if !asked["R@"+strconv.Itoa(k)] {
			return k
		}
	}
	return 0
}

// CheckPerClass refuses a per-class table over a metric list (--metrics,
// comma-separated; "" is every metric) that names no k-NN metric: the
// table would be empty. Unknown names pass (they are Evaluate's error).
func CheckPerClass(list string) error {
	if list == "" {
		return nil
	}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if d, ok := Lookup(n); !ok || d.Stage == Retrieval || strings.EqualFold(n, "R@k") {
			return nil
		}
	}
	return usage.Errorf("--per-class reports k-NN metrics (R@k, MAP@R, mAP@C, …) per class; --metrics %s names none", list)
}

// ResolveProtocol returns the recall ks of the named protocol ("" keeps
// ks) and checks the evaluation mode against it; ksGiven says ks came
// from an explicit --k, which must then equal the protocol's.
func ResolveProtocol(name string, ks []int, ksGiven, queryGallery bool) ([]int, *Protocol, error) {
	lower := strings.ToLower(name)
	if lower == "" {
		return ks, nil, nil
	}
	p, ok := LookupProtocol(lower)
	if !ok {
		return nil, nil, usage.Errorf("--protocol %q: unknown (have: %s)", name, strings.Join(ProtocolNames(), ", "))
	}
	if ksGiven && !slices.Equal(ks, p.Ks) {
		s := make([]string, len(p.Ks))
		for i, v := range p.Ks {
			s[i] = strconv.Itoa(v)
		}
		return nil, nil, usage.Errorf("--protocol %s sets --k %s; drop --k or --protocol", lower, strings.Join(s, ","))
	}
	if p.QueryGallery && !queryGallery {
		return nil, nil, usage.Errorf("--protocol %s evaluates queries against a gallery: pass --query-emb, --query-labels, --gallery-emb, --gallery-labels", lower)
	}
	if !p.QueryGallery && queryGallery {
		return nil, nil, usage.Errorf("--protocol %s evaluates one set leave-one-out: pass --emb and --labels", lower)
	}
	return slices.Clone(p.Ks), &p, nil
}

// ParseAverage reads --average: query | per-class (per_class, class).
func ParseAverage(s string) (Average, error) {
	switch strings.ToLower(s) {
	case "query", "":
		return PerQuery, nil
	case "per-class", "per_class", "class":
		return PerClass, nil
	}
	return "", usage.Errorf("--average must be query or per-class (got %q)", s)
}

// ParsePMLK reads --pml-k: a positive k or max_bin_count
// (PMLKMaxBinCount), under PML's conventions only.
func ParsePMLK(s string, conv Convention) (int, error) {
	k := PMLKMaxBinCount
	if !strings.EqualFold(s, "max_bin_count") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, usage.Errorf("--pml-k must be a positive integer or max_bin_count (got %q)", s)
		}
		k = n
	}
	if conv != PML && conv != PML3 {
		return 0, usage.Errorf("--pml-k reproduces pytorch-metric-learning's explicit k and needs --compat pml")
	}
	return k, nil
}
