package metrics

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Stage is the shared computation a metric reads. Evaluate runs each stage
// at most once, for all the requested metrics that need it.
type Stage int

const (
	// Retrieval metrics read one k-NN search (depth = the largest window
	// any requested metric needs).
	Retrieval Stage = iota + 1
	// Clustering metrics read the class × cluster table of one clustering
	// of the query embeddings.
	Clustering
	// Whole metrics read the embedding matrix (and labels) as a whole.
	Whole
)

// window is the neighbour-list reading of the retrieval plan that produces
// a built-in retrieval metric.
type window int

const (
	windowNone window = iota
	windowK           // R@k: the first k neighbours
	windowR           // MAP@R, R-Precision, mAP@C: the R_q (roth: n_c) nearest
	window1000        // mAP@1000
)

// Descriptor is everything dmlbench knows about one metric: Evaluate
// dispatches from it (which stage, which conventions define it, whether it
// is in the default set), `dmlbench list metrics` prints it and reports
// format from it (percent or not, which direction is better). Adding a
// metric is one Descriptor in builtins, the function it names and a test
// (docs/extending.md).
type Descriptor struct {
	// Key is the JSON key. "R@k" stands for the recall family: one key
	// R@1, R@2, ... per requested k.
	Key string
	// Aliases are other names accepted by --metrics (case-insensitive).
	Aliases []string
	Stage   Stage
	// Percent: a fraction in [0, 1] that tables show ×100.
	Percent bool
	// LowerIsBetter: smaller values are better (e.g. ρ).
	LowerIsBetter bool
	// Definition is one line, strict convention.
	Definition string
	// Source cites the definition by author and year.
	Source string

	// Conventions are those that define the metric (nil: every one).
	// Asked for by name under another, Evaluate refuses it with
	// Unsupported, which says why and what to use instead.
	Conventions []Convention
	Unsupported string
	// OptIn are the conventions under which the metric is computed only
	// when asked for by name (nil: it is in every default set it is
	// defined in).
	OptIn []Convention

	// Exactly one way of computing the value, by stage:

	// window: built-in retrieval metrics produced by the retrieval plan
	// (retrieval.go), which shares one pass over each query's hits.
	window window
	// PerQuery scores one query for a retrieval metric; the metric is the
	// mean of the values of the queries for which counted is true (a mean
	// over no query is undefined: NaN, null in JSON).
	PerQuery func(q QueryHits) (value float64, counted bool)
	// Depth is how many neighbours a PerQuery metric reads: 0 = the R_q
	// nearest (as MAP@R), AllNeighbours = the whole ranking, n > 0 = the
	// first n, PositiveRanks = only the ranks of the query's same-class
	// items (QueryHits.Ranks) over the whole ranking, or pml's --pml-k
	// window.
	Depth int
	// Cluster reads the class × cluster contingency table.
	Cluster func(ct *contingency) float64
	// Embedding reads the whole embedding; it may add warnings.
	Embedding func(e *WholeInput) (float64, []string, error)
}

const (
	// AllNeighbours as Descriptor.Depth asks for the whole ranking.
	AllNeighbours = -1
	// PositiveRanks as Descriptor.Depth asks for the ranks of the query's
	// same-class items only (QueryHits.Ranks): the search need not be
	// gallery-deep, the ranks are counted during the scan when the k-NN
	// backend can.
	PositiveRanks = -2
)

// QueryHits is what a PerQuery metric sees of one query.
type QueryHits struct {
	// Hits are the relevance bits of the query's neighbours in rank order
	// (the query itself excluded), at least as many as the metric's Depth
	// asks for (fewer only when the gallery is smaller).
	Hits []bool
	// R is the number of other same-class items in the gallery (R_q).
	R int
	// Gallery is the number of items the query searched.
	Gallery    int
	Convention Convention
	// Ranks (Depth PositiveRanks only) are the 1-based ranks of the
	// query's same-class items within its window, ascending: the whole
	// ranking, or the first k under pml's --pml-k.
	Ranks []int32
}

// WholeInput is what a Whole-stage metric reads.
type WholeInput struct {
	Opt     Options
	Conv    Convention
	In      Input
	Labels  []int32 // dense query labels
	Classes int
}

// notRoth is why MRR and P@10 are refused under roth.
const notRoth = "is not part of Roth et al. 2020's evaluation code: use --compat strict or pml"

// builtins lists every metric Evaluate can compute, in output order.
var builtins = []Descriptor{
	{Key: "R@k", Stage: Retrieval, Percent: true, window: windowK,
		Definition: "fraction of queries with a same-class item among their k nearest neighbours (lone queries score 0)",
		Source:     "Jégou et al. 2011; Roth et al. 2020, §4"},
	{Key: "NMI", Stage: Clustering, Percent: true, Cluster: (*contingency).NMI,
		Definition: "normalised mutual information I(Ω;Y)/((H(Ω)+H(Y))/2) between k-means clusters (K = #classes) and labels",
		Source:     "Manning et al. 2008; Roth et al. 2020, §4"},
	{Key: "F1", Stage: Clustering, Percent: true, Cluster: (*contingency).F1,
		Definition: "pair-counting F1 = 2·TP/(same-class pairs + same-cluster pairs) of the k-means clustering",
		Source:     "Song et al. 2016; Fehérvári et al. 2019"},
	{Key: "mAP@C", Stage: Retrieval, Percent: true, window: windowR,
		Definition: "mean average precision with window and divisor = the other members of the query's class (= MAP@R under strict)",
		Source:     "Roth et al. 2020, code metrics/mAP_c"},
	{Key: "mAP@1000", Stage: Retrieval, Percent: true, window: window1000,
		Definition: "mean over queries of (1/min(R_q,W)) Σ_{i≤W} P@i·rel_i with W = min(1000, gallery size)",
		Source:     "Roth et al. 2020, code metrics/mAP_1000"},
	{Key: "MAP@R", Aliases: []string{"mapr", "map_at_r"}, Stage: Retrieval, Percent: true, window: windowR,
		Definition: "mean over queries of (1/R_q) Σ_{i≤R_q} P@i·rel_i, R_q = other members of the query's class",
		Source:     "Musgrave et al. 2020, §3.2"},
	{Key: "R-Precision", Aliases: []string{"rprecision", "r_precision"}, Stage: Retrieval, Percent: true, window: windowR,
		Definition: "mean over queries of (same-class items among the first R_q neighbours)/R_q",
		Source:     "Musgrave et al. 2020, §3.2"},
	{Key: "AMI", Stage: Clustering, Percent: true, Cluster: (*contingency).AMI,
		Definition: "adjusted mutual information (MI − E[MI])/(mean(H) − E[MI]) of the k-means clustering, arithmetic mean",
		Source:     "Vinh et al. 2010; pytorch-metric-learning"},
	{Key: "rho", Stage: Whole, LowerIsBetter: true, Embedding: rhoMetric,
		Definition: "ρ spectral decay KL(U_D ‖ ŝ) of the normalised singular values of the embedding matrix",
		Source:     "Roth et al. 2020, §5 and supp. §E"},
	{Key: "dist_ratio", Aliases: []string{"dists", "pi_ratio"}, Stage: Whole, Embedding: distRatioMetric,
		Definition: "π_ratio: mean intra-class distance / mean distance between class means",
		Source:     "Roth et al. 2020, §5"},
	{Key: MRRKey, Aliases: []string{"mean_reciprocal_rank"}, Stage: Retrieval, Percent: true,
		Depth: PositiveRanks, PerQuery: reciprocalRank,
		Conventions: []Convention{Strict, PML}, Unsupported: notRoth, OptIn: []Convention{Strict},
		Definition: "mean over queries of 1/rank of the first same-class item in the full ranking (lone queries left out)",
		Source:     "pytorch-metric-learning v2.8.1 (Musgrave et al. 2020)"},
	{Key: PMLMAPKey, Stage: Retrieval, Percent: true, Depth: PositiveRanks, PerQuery: pmlAveragePrecision,
		Conventions: []Convention{PML},
		Unsupported: "is pytorch-metric-learning's definition: use --compat pml (MAP@R and mAP@1000 are the standard ones)",
		Definition:  "pml convention only: mean over queries of (1/R_q) Σ_{i≤k} P@i·rel_i over the first k neighbours (k = gallery, or --pml-k)",
		Source:      "pytorch-metric-learning v2.8.1 (Musgrave et al. 2020)"},
	{Key: "P@10", Aliases: []string{"precision_at_10"}, Stage: Retrieval, Percent: true, Depth: 10, PerQuery: precisionAt10,
		Conventions: []Convention{Strict, PML}, Unsupported: notRoth, OptIn: []Convention{Strict, PML},
		Definition: "mean over queries of (same-class items among the 10 nearest neighbours)/10 (lone queries left out)",
		Source:     "Manning et al. 2008, §8.4"},
}

// precisionAt10 is P@10 for one query: the same-class items among its 10
// nearest neighbours, over 10 (Manning et al. 2008, §8.4); a lone query is
// left out.
func precisionAt10(q QueryHits) (float64, bool) {
	n := 0
	for _, h := range q.Hits[:min(10, len(q.Hits))] {
		if h {
			n++
		}
	}
	return float64(n) / 10, q.R > 0
}

// All returns every metric Evaluate can compute, in output order (a copy).
func All() []Descriptor { return append([]Descriptor(nil), builtins...) }

// defines reports whether d is defined under conv.
func (d Descriptor) defines(conv Convention) bool {
	return d.Conventions == nil || slices.Contains(d.Conventions, conv)
}

// inDefaultSet reports whether d is computed under conv when no metric is
// named.
func (d Descriptor) inDefaultSet(conv Convention) bool {
	return d.defines(conv) && !slices.Contains(d.OptIn, conv)
}

func init() {
	seen := map[string]string{}
	for _, d := range builtins {
		ways := 0
		for _, set := range []bool{d.window != windowNone, d.PerQuery != nil, d.Cluster != nil, d.Embedding != nil} {
			if set {
				ways++
			}
		}
		if ways != 1 {
			panic(fmt.Sprintf("metrics: %s must have exactly one way of computing it (has %d)", d.Key, ways))
		}
		if (d.Conventions != nil) != (d.Unsupported != "") {
			panic(fmt.Sprintf("metrics: %s: Conventions and Unsupported go together", d.Key))
		}
		for _, n := range append([]string{d.Key}, d.Aliases...) {
			l := strings.ToLower(n)
			if prev, dup := seen[l]; dup {
				panic(fmt.Sprintf("metrics: name %q of %s is already taken by %s", n, d.Key, prev))
			}
			seen[l] = d.Key
		}
	}
}

var recallKey = regexp.MustCompile(`^[Rr]@(\d+)$`)

// Lookup returns the descriptor of a metric key or alias (any case); R@1,
// R@10, ... return the R@k descriptor.
func Lookup(name string) (Descriptor, bool) {
	n := strings.TrimSpace(name)
	if recallKey.MatchString(n) {
		n = "R@k"
	}
	for _, d := range builtins {
		if strings.EqualFold(d.Key, n) {
			return d, true
		}
		for _, a := range d.Aliases {
			if strings.EqualFold(a, n) {
				return d, true
			}
		}
	}
	return Descriptor{}, false
}

// IsPercent reports whether key names a metric that is a fraction in [0, 1]
// (tables show it in percent). Unknown keys are not.
func IsPercent(key string) bool {
	d, ok := Lookup(key)
	return ok && d.Percent
}

// LowerIsBetter reports whether smaller values of the metric key are
// better. Unknown keys are not.
func LowerIsBetter(key string) bool {
	d, ok := Lookup(key)
	return ok && d.LowerIsBetter
}

// family maps a user-given metric name (any case) to its descriptor and,
// for R@N, N.
func family(name string) (Descriptor, int, error) {
	n := strings.TrimSpace(name)
	up := strings.ToUpper(n)
	if strings.HasPrefix(up, "R@") && up != "R@K" {
		k, err := strconv.Atoi(n[2:])
		if err != nil || k <= 0 {
			return Descriptor{}, 0, fmt.Errorf("bad metric %q: R@k needs a positive integer k", name)
		}
		d, _ := Lookup("R@k")
		return d, k, nil
	}
	if d, ok := Lookup(n); ok {
		return d, 0, nil
	}
	keys := make([]string, len(builtins))
	for i, m := range builtins {
		keys[i] = m.Key
	}
	return Descriptor{}, 0, fmt.Errorf("unknown metric %q (have: %s)", name, strings.Join(keys, ", "))
}

// want is the resolved set of metrics: the descriptors to compute, the
// recall ks, and the exact keys the caller asked for.
type want struct {
	fam map[string]bool // descriptor keys to compute
	ks  []int
	all bool            // no list given: every metric computed is asked for
	ask map[string]bool // keys asked for (when !all)
}

func resolve(names []string, ks []int) (want, error) {
	w := want{fam: map[string]bool{}, ask: map[string]bool{}, all: len(names) == 0}
	var extraK []int
	recallFamily := w.all // the R@k family itself (not only some R@N) is asked
	if w.all {
		for _, d := range builtins {
			w.fam[d.Key] = true
		}
	}
	for _, n := range names {
		d, k, err := family(n)
		if err != nil {
			return w, err
		}
		w.fam[d.Key] = true
		switch {
		case k > 0:
			extraK = append(extraK, k)
		case d.Key == "R@k":
			recallFamily = true
		default:
			w.ask[d.Key] = true
		}
	}
	if w.fam["R@k"] {
		if recallFamily {
			if len(ks) > 0 {
				w.ks = append([]int(nil), ks...)
			} else {
				w.ks = []int{1, 2, 4, 8}
			}
		}
		w.ks = append(w.ks, extraK...)
		sort.Ints(w.ks)
		w.ks = dedupInts(w.ks)
		for _, k := range w.ks {
			if k <= 0 {
				return w, fmt.Errorf("recall k = %d must be positive", k)
			}
			w.ask["R@"+strconv.Itoa(k)] = true
		}
	}
	return w, nil
}

// stage reports whether any requested metric needs stage s.
func (w want) stage(s Stage) bool {
	for _, d := range builtins {
		if w.fam[d.Key] && d.Stage == s {
			return true
		}
	}
	return false
}

// needs reports whether any requested built-in retrieval metric reads
// window v.
func (w want) needs(v window) bool {
	for _, d := range builtins {
		if w.fam[d.Key] && d.window == v {
			return true
		}
	}
	return false
}

// perQuery lists the requested PerQuery metrics in builtins' order.
func (w want) perQuery() []Descriptor {
	var out []Descriptor
	for _, d := range builtins {
		if w.fam[d.Key] && d.PerQuery != nil {
			out = append(out, d)
		}
	}
	return out
}

// asked reports whether the caller asked for key (every key when no list
// was given).
func (w want) asked(key string) bool { return w.all || w.ask[key] }

// split moves the computed values nobody asked for (e.g. R-Precision,
// computed along with MAP@R) from m into a separate map.
func (w want) split(m map[string]float64) (asked, extra map[string]float64) {
	if w.all {
		return m, nil
	}
	asked = map[string]float64{}
	for k, v := range m {
		if w.ask[k] {
			asked[k] = v
			continue
		}
		if extra == nil {
			extra = map[string]float64{}
		}
		extra[k] = v
	}
	return asked, extra
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

// Keys returns the JSON metric keys in canonical order for a result map:
// R@k by k, then builtins' order, then any other key alphabetically.
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
	for _, i := range builtins[1:] {
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

// applyConventions drops from the default metric set what conv does not
// define or computes only when asked (Descriptor.Conventions, OptIn), and
// refuses a metric named in names that conv does not define.
func applyConventions(w want, names []string, conv Convention) error {
	asked := map[string]bool{}
	for _, n := range names {
		if f, _, err := family(n); err == nil {
			asked[f.Key] = true
		}
	}
	for _, d := range builtins {
		switch {
		case asked[d.Key] && !d.defines(conv):
			return inputErr("%s %s", d.Key, d.Unsupported)
		case !asked[d.Key] && !d.inDefaultSet(conv):
			delete(w.fam, d.Key)
		}
	}
	return nil
}
