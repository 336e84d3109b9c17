package metrics

import (
	"fmt"
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
// is in the default set), `dmlbench list metrics` prints it and every table
// formats from it (unit, direction, default columns, equal metrics folded
// into one column). No other code names metrics. Adding a metric is one
// Descriptor in builtins, the function it names and a test
// (docs/extending.md).
type Descriptor struct {
	// Key is the JSON key. A key ending in "@k" is a family: one key per
	// positive k (R@1, R@2, ...; P@5; mAP@100).
	Key string
	// Aliases are other names accepted by --metrics (case-insensitive),
	// pytorch-metric-learning's among them.
	Aliases []string
	// Members name single members of a family (case-insensitive):
	// pytorch-metric-learning's precision_at_1 is R@1.
	Members map[string]int
	Stage   Stage
	// Percent: a fraction in [0, 1] that tables show ×100 (2 decimals;
	// any other value is shown as is with 4).
	Percent bool
	// LowerIsBetter: smaller values are better (e.g. ρ).
	LowerIsBetter bool
	// ReportColumns are this metric's keys among `dmlbench report`'s
	// default columns (Roth et al. 2020, Tab. 4–6), placed at ReportAt
	// (1-based; 0: not a default column).
	ReportColumns []string
	ReportAt      int
	// SameAs names the metric this one equals by definition where both are
	// defined alike (mAP@C and MAP@R under strict and pml); a table shows
	// the two in one column "SameAs = Key" when every value agrees bit for
	// bit.
	SameAs string
	// KWindow: the metric reads pml's window, --pml-k or the whole
	// gallery, and tables title it with that k ("MRR@99").
	KWindow bool
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
	// PerQueryAt is PerQuery of a family member k (its Depth is k).
	PerQueryAt func(k int) func(q QueryHits) (value float64, counted bool)
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
	{Key: "R@k", Members: map[string]int{"precision_at_1": 1}, Stage: Retrieval, Percent: true, window: windowK,
		ReportColumns: []string{"R@1", "R@2"}, ReportAt: 1,
		Definition: "fraction of queries with a same-class item among their k nearest neighbours (lone queries score 0)",
		Source:     "Jégou et al. 2011; Roth et al. 2020, §4"},
	{Key: "NMI", Stage: Clustering, Percent: true, Cluster: (*contingency).NMI, ReportAt: 5,
		Definition: "normalised mutual information I(Ω;Y)/((H(Ω)+H(Y))/2) between k-means clusters (K = #classes) and labels",
		Source:     "Manning et al. 2008; Roth et al. 2020, §4"},
	{Key: "F1", Stage: Clustering, Percent: true, Cluster: (*contingency).F1, ReportAt: 2,
		Definition: "pair-counting F1 = 2·TP/(same-class pairs + same-cluster pairs) of the k-means clustering",
		Source:     "Song et al. 2016; Fehérvári et al. 2019"},
	{Key: "mAP@C", Stage: Retrieval, Percent: true, window: windowR, ReportAt: 3, SameAs: "MAP@R",
		Definition: "mean average precision with window and divisor = the other members of the query's class (= MAP@R under strict)",
		Source:     "Roth et al. 2020, code metrics/mAP_c"},
	{Key: "mAP@1000", Stage: Retrieval, Percent: true, window: window1000, ReportAt: 4,
		Definition: "mean over queries of (1/min(R_q,W)) Σ_{i≤W} P@i·rel_i with W = min(1000, gallery size)",
		Source:     "Roth et al. 2020, code metrics/mAP_1000"},
	{Key: "mAP@k", Stage: Retrieval, Percent: true, PerQueryAt: averagePrecisionAt,
		Conventions: []Convention{Strict, PML}, OptIn: []Convention{Strict, PML},
		Unsupported: "is not part of Roth et al. 2020's evaluation code, which has mAP@1000 only: use mAP@1000, or --compat strict or pml",
		Definition:  "mAP@1000 at any window k: mean over queries of (1/min(R_q,W)) Σ_{i≤W} P@i·rel_i, W = min(k, gallery size); pml divides by R_q",
		Source:      "Roth et al. 2020, code metrics/mAP_1000; pytorch-metric-learning v2.8.1 mean_average_precision"},
	{Key: "MAP@R", Aliases: []string{"mapr", "map_at_r", "mean_average_precision_at_r"}, Stage: Retrieval, Percent: true, window: windowR,
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
	{Key: MRRKey, Aliases: []string{"mean_reciprocal_rank"}, Stage: Retrieval, Percent: true, KWindow: true,
		Depth: PositiveRanks, PerQuery: reciprocalRank,
		Conventions: []Convention{Strict, PML}, Unsupported: notRoth, OptIn: []Convention{Strict},
		Definition: "mean over queries of 1/rank of the first same-class item in the full ranking (lone queries left out)",
		Source:     "pytorch-metric-learning v2.8.1 (Musgrave et al. 2020)"},
	{Key: PMLMAPKey, Stage: Retrieval, Percent: true, KWindow: true, Depth: PositiveRanks, PerQuery: pmlAveragePrecision,
		Conventions: []Convention{PML},
		Unsupported: "is pytorch-metric-learning's definition: use --compat pml (MAP@R and mAP@1000 are the standard ones)",
		Definition:  "pml convention only: mean over queries of (1/R_q) Σ_{i≤k} P@i·rel_i over the first k neighbours (k = gallery, or --pml-k)",
		Source:      "pytorch-metric-learning v2.8.1 (Musgrave et al. 2020)"},
	{Key: "P@k", Members: map[string]int{"precision_at_10": 10}, Stage: Retrieval, Percent: true, PerQueryAt: precisionAt,
		Conventions: []Convention{Strict, PML}, Unsupported: notRoth, OptIn: []Convention{Strict, PML},
		Definition: "mean over queries of (same-class items among the k nearest neighbours)/k (lone queries left out)",
		Source:     "Manning et al. 2008, §8.4"},
}

// precisionAt is P@k: for one query, the same-class items among its k
// nearest neighbours, over k (Manning et al. 2008, §8.4); a lone query is
// left out. With fewer than k neighbours (a gallery smaller than k) the
// missing ones count as misses.
func precisionAt(k int) func(QueryHits) (float64, bool) {
	return func(q QueryHits) (float64, bool) {
		n := 0
		for _, h := range q.Hits[:min(k, len(q.Hits))] {
			if h {
				n++
			}
		}
		return float64(n) / float64(k), q.R > 0
	}
}

// averagePrecisionAt is mAP@k for one query: (1/d) Σ_{i≤W} P@i·rel_i with
// W = min(k, gallery), d = min(R_q, W) (Roth et al. 2020's mAP_1000 at any
// window), or d = R_q under pml (pytorch-metric-learning v2.8.1,
// mean_average_precision with k); a lone query is left out.
func averagePrecisionAt(k int) func(QueryHits) (float64, bool) {
	return func(q QueryHits) (float64, bool) {
		if q.R == 0 {
			return 0, false
		}
		w := min(k, q.Gallery)
		sum, _ := precisionSum(q.Hits, w)
		if q.Convention == PML {
			return sum / float64(q.R), true
		}
		return sum / float64(min(q.R, w)), true
	}
}

// recorded are keys that run.json files and published tables hold but
// Evaluate does not compute; tables format them by these descriptors.
var recorded = []Descriptor{
	{Key: "loss", LowerIsBetter: true, Definition: "training loss (run.json)", Source: "dmlbench run"},
	{Key: "rho@k", LowerIsBetter: true, Definition: "ρ spectral decay over the first k singular values (dmlbench spectra)", Source: "Roth et al. 2020, §5"},
	{Key: "ARI", Percent: true, Definition: "adjusted Rand index of a clustering (published tables)", Source: "Hubert and Arabie 1985"},
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
	for _, d := range append(All(), recorded...) {
		ways := 0
		for _, set := range []bool{d.window != windowNone, d.PerQuery != nil, d.PerQueryAt != nil, d.Cluster != nil, d.Embedding != nil} {
			if set {
				ways++
			}
		}
		if (ways != 1) != (d.Stage == 0) {
			panic(fmt.Sprintf("metrics: %s must have exactly one way of computing it (has %d)", d.Key, ways))
		}
		if (d.Conventions != nil) != (d.Unsupported != "") {
			panic(fmt.Sprintf("metrics: %s: Conventions and Unsupported go together", d.Key))
		}
		if (d.PerQueryAt != nil || len(d.Members) > 0) && !d.Family() {
			panic(fmt.Sprintf("metrics: %s: PerQueryAt and Members belong to a family (key X@k)", d.Key))
		}
		names := append([]string{d.Key}, d.Aliases...)
		for n := range d.Members {
			names = append(names, n)
		}
		for _, n := range names {
			l := strings.ToLower(n)
			if prev, dup := seen[l]; dup {
				panic(fmt.Sprintf("metrics: name %q of %s is already taken by %s", n, d.Key, prev))
			}
			seen[l] = d.Key
		}
	}
}

// Family reports whether d is a family of metrics, one per positive k
// (its Key ends in "@k").
func (d Descriptor) Family() bool { return strings.HasSuffix(d.Key, "@k") }

// prefix is a family's key without "@k".
func (d Descriptor) prefix() string { return strings.TrimSuffix(d.Key, "@k") }

// member is the key of a family's member k ("R@5").
func (d Descriptor) member(k int) string { return d.prefix() + "@" + strconv.Itoa(k) }

// known are the descriptors names resolve against: every computed metric,
// then the keys tables know but Evaluate does not compute.
func known() []Descriptor { return append(All(), recorded...) }

// lookup resolves a name (any case) to its descriptor and, for a family
// member, its k: an exact key or alias first, then a named member
// (precision_at_1), then X@N for a family X@k. k is 0 for a family named
// as such ("R@k") and for a plain metric; err is set for a family member
// with a bad k ("P@0", "R@x").
func lookup(name string) (d Descriptor, k int, found bool, err error) {
	n := strings.TrimSpace(name)
	for _, d := range known() {
		if strings.EqualFold(d.Key, n) {
			return d, 0, true, nil
		}
		for _, a := range d.Aliases {
			if strings.EqualFold(a, n) {
				return d, 0, true, nil
			}
		}
		for m, k := range d.Members {
			if strings.EqualFold(m, n) {
				return d, k, true, nil
			}
		}
	}
	at := strings.LastIndex(n, "@")
	if at < 0 {
		return Descriptor{}, 0, false, nil
	}
	for _, d := range known() {
		if d.Family() && strings.EqualFold(d.prefix(), n[:at]) {
			k, perr := strconv.Atoi(n[at+1:])
			if perr != nil || k <= 0 {
				return d, 0, true, fmt.Errorf("bad metric %q: %s needs a positive integer k (e.g. %s)", name, d.Key, d.member(10))
			}
			return d, k, true, nil
		}
	}
	return Descriptor{}, 0, false, nil
}

// Lookup returns the descriptor of a metric key or alias (any case); R@1,
// P@5, precision_at_1, ... return their family's descriptor.
func Lookup(name string) (Descriptor, bool) {
	d, _, ok, err := lookup(name)
	return d, ok && err == nil
}

// Canonical returns the key a name stands for: the JSON key of a metric
// ("mapr" → "MAP@R", "precision_at_1" → "R@1", "p@5" → "P@5"), the family
// key for a family named as such ("R@k"); ok is false for an unknown name.
func Canonical(name string) (string, bool) {
	d, k, ok, err := lookup(name)
	switch {
	case !ok || err != nil:
		return "", false
	case k > 0:
		return d.member(k), true
	}
	return d.Key, true
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

// Title is the name of metric key in a table of res: the key, with its k
// for a metric of pml's window (Descriptor.KWindow: "mean_average_precision@99"
// beside "mAP@1000").
func Title(key string, res *Result) string {
	d, ok := Lookup(key)
	if !ok || !d.KWindow || res == nil {
		return key
	}
	k := res.Gallery
	if res.PMLK > 0 {
		k = min(res.PMLK, res.Gallery)
	}
	return key + "@" + strconv.Itoa(k)
}

// ReportColumns are the default columns of `dmlbench report`: the
// descriptors' ReportColumns (their Key when none) in ReportAt order.
func ReportColumns() []string {
	ds := slices.DeleteFunc(known(), func(d Descriptor) bool { return d.ReportAt == 0 })
	slices.SortStableFunc(ds, func(a, b Descriptor) int { return a.ReportAt - b.ReportAt })
	var out []string
	for _, d := range ds {
		if len(d.ReportColumns) > 0 {
			out = append(out, d.ReportColumns...)
		} else {
			out = append(out, d.Key)
		}
	}
	return out
}

// family maps a user-given metric name (any case) to the descriptor of a
// metric Evaluate computes and, for a family member, its k.
func family(name string) (Descriptor, int, error) {
	d, k, ok, err := lookup(name)
	switch {
	case err != nil:
		return Descriptor{}, 0, err
	case ok && d.Stage != 0:
		return d, k, nil
	case ok:
		return Descriptor{}, 0, fmt.Errorf("metric %q is recorded by training runs or published tables; eval does not compute it", name)
	}
	keys := make([]string, len(builtins))
	for i, m := range builtins {
		keys[i] = m.Key
	}
	return Descriptor{}, 0, fmt.Errorf("unknown metric %q (have: %s)", name, strings.Join(keys, ", "))
}

// want is the resolved set of metrics: the descriptors to compute, the
// recall ks, the ks of the other families, and the exact keys the caller
// asked for.
type want struct {
	fam   map[string]bool // descriptor keys to compute
	ks    []int
	famKs map[string][]int // family key → its asked ks (R@k: ks)
	all   bool             // no list given: every metric computed is asked for
	ask   map[string]bool  // keys asked for (when !all)
}

func resolve(names []string, ks []int) (want, error) {
	w := want{fam: map[string]bool{}, ask: map[string]bool{}, famKs: map[string][]int{}, all: len(names) == 0}
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
		case d.Key == "R@k" && k > 0:
			extraK = append(extraK, k)
		case d.Key == "R@k":
			recallFamily = true
		case k > 0:
			w.famKs[d.Key] = append(w.famKs[d.Key], k)
			w.ask[d.member(k)] = true
		case d.Family():
			return w, fmt.Errorf("metric %q: name a member with its k (e.g. %s)", n, d.member(10))
		default:
			w.ask[d.Key] = true
		}
	}
	for f, fks := range w.famKs {
		slices.Sort(fks)
		w.famKs[f] = slices.Compact(fks)
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

// perQuery lists the requested PerQuery metrics in builtins' order, a
// family as one descriptor per asked k (Key its member's, Depth k).
func (w want) perQuery() []Descriptor {
	var out []Descriptor
	for _, d := range builtins {
		switch {
		case !w.fam[d.Key]:
		case d.PerQuery != nil:
			out = append(out, d)
		case d.PerQueryAt != nil:
			for _, k := range w.famKs[d.Key] {
				m := d
				m.Key, m.Depth, m.PerQuery, m.PerQueryAt = d.member(k), k, d.PerQueryAt(k), nil
				out = append(out, m)
			}
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
// builtins' order, a family's members by k, then any other key
// alphabetically.
func Keys(m map[string]float64) []string {
	type member struct {
		key string
		k   int
	}
	byFamily := map[string][]member{}
	var others []string
	for key := range m {
		d, k, ok, err := lookup(key)
		canonical := ok && err == nil && d.Stage != 0 && (k == 0 && key == d.Key || k > 0 && key == d.member(k))
		if !canonical || (d.Family() && k == 0) {
			others = append(others, key)
			continue
		}
		byFamily[d.Key] = append(byFamily[d.Key], member{key, k})
	}
	out := make([]string, 0, len(m))
	for _, d := range builtins {
		ms := byFamily[d.Key]
		slices.SortFunc(ms, func(a, b member) int { return a.k - b.k })
		for _, x := range ms {
			out = append(out, x.key)
		}
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
