package metrics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Info documents one metric for `dmlbench list metrics`.
type Info struct {
	Key        string // JSON key ("R@k" stands for R@1, R@2, ... one per requested k)
	Definition string // one line, strict convention
	Source     string
}

// All lists every metric Evaluate can compute, in output order.
var All = []Info{
	{"R@k", "fraction of queries with a same-class item among their k nearest neighbours (lone queries score 0)", "Jegou et al. 2011; Roth et al. 2020 (seed 000) §4"},
	{"NMI", "normalised mutual information I(Ω;Y)/((H(Ω)+H(Y))/2) between k-means clusters (K = #classes) and labels", "Manning et al. 2008; seed 000 §4"},
	{"F1", "pair-counting F1 = 2·TP/(same-class pairs + same-cluster pairs) of the k-means clustering", "Song et al. 2016 (seed 002)"},
	{"mAP@C", "mean average precision with window and divisor = the other members of the query's class (= MAP@R under strict)", "Roth et al. 2020 (seed 000) metrics/mAP_c"},
	{"mAP@1000", "mean over queries of (1/min(R_q,W)) Σ_{i≤W} P@i·rel_i with W = min(1000, gallery size)", "Roth et al. 2020 (seed 000) metrics/mAP_1000"},
	{"MAP@R", "mean over queries of (1/R_q) Σ_{i≤R_q} P@i·rel_i, R_q = other members of the query's class", "Musgrave et al. 2020, A Metric Learning Reality Check §3.2"},
	{"R-Precision", "mean over queries of (same-class items among the first R_q neighbours)/R_q", "Musgrave et al. 2020 §3.2"},
	{"AMI", "adjusted mutual information (MI − E[MI])/(mean(H) − E[MI]) of the k-means clustering, arithmetic mean", "Vinh et al. 2010; pytorch-metric-learning"},
	{"rho", "ρ spectral decay KL(U_D ‖ ŝ) of the normalised singular values of the embedding matrix", "Roth et al. 2020 (seed 000) §5, supp. §E"},
	{"dist_ratio", "π_ratio: mean intra-class distance / mean distance between class means", "Roth et al. 2020 (seed 000) §5"},
}

// family maps a user-given metric name (any case) to its canonical family key.
func family(name string) (string, int, error) {
	n := strings.TrimSpace(name)
	up := strings.ToUpper(n)
	if strings.HasPrefix(up, "R@") && up != "R@K" {
		k, err := strconv.Atoi(n[2:])
		if err != nil || k <= 0 {
			return "", 0, fmt.Errorf("bad metric %q: R@k needs a positive integer k", name)
		}
		return "R@k", k, nil
	}
	for _, i := range All {
		if strings.EqualFold(i.Key, n) {
			return i.Key, 0, nil
		}
	}
	switch strings.ToLower(n) {
	case "map@r", "mapr", "map_at_r":
		return "MAP@R", 0, nil
	case "rprecision", "r_precision":
		return "R-Precision", 0, nil
	case "dists", "pi_ratio":
		return "dist_ratio", 0, nil
	}
	keys := make([]string, len(All))
	for i, m := range All {
		keys[i] = m.Key
	}
	return "", 0, fmt.Errorf("unknown metric %q (have: %s)", name, strings.Join(keys, ", "))
}

// want is the resolved set of metric families and recall ks.
type want struct {
	fam map[string]bool
	ks  []int
}

func resolve(names []string, ks []int) (want, error) {
	w := want{fam: map[string]bool{}}
	extraK := []int{}
	if len(names) == 0 {
		for _, i := range All {
			w.fam[i.Key] = true
		}
	}
	for _, n := range names {
		f, k, err := family(n)
		if err != nil {
			return w, err
		}
		w.fam[f] = true
		if k > 0 {
			extraK = append(extraK, k)
		}
	}
	if w.fam["R@k"] {
		switch {
		case len(ks) > 0:
			w.ks = append([]int(nil), ks...)
		case len(extraK) > 0:
		default:
			w.ks = []int{1, 2, 4, 8}
		}
		w.ks = append(w.ks, extraK...)
		sort.Ints(w.ks)
		w.ks = dedupInts(w.ks)
		for _, k := range w.ks {
			if k <= 0 {
				return w, fmt.Errorf("recall k = %d must be positive", k)
			}
		}
	}
	return w, nil
}

func dedupInts(a []int) []int {
	out := a[:0]
	for i, v := range a {
		if i == 0 || v != a[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Keys returns the JSON metric keys in canonical order for a result map.
func Keys(m map[string]float64) []string {
	var rk []int
	rest := map[string]bool{}
	for k := range m {
		if strings.HasPrefix(k, "R@") {
			if v, err := strconv.Atoi(k[2:]); err == nil {
				rk = append(rk, v)
				continue
			}
		}
		rest[k] = true
	}
	sort.Ints(rk)
	out := make([]string, 0, len(m))
	for _, k := range rk {
		out = append(out, "R@"+strconv.Itoa(k))
	}
	for _, i := range All[1:] {
		if rest[i.Key] {
			out = append(out, i.Key)
			delete(rest, i.Key)
		}
	}
	var others []string
	for k := range rest {
		others = append(others, k)
	}
	sort.Strings(others)
	return append(out, others...)
}
