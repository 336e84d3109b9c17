package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/mat32"
	"github.com/dmlbench/dmlbench/metrics"
)

// eval's flags for the standard protocols and pytorch-metric-learning
// parity (Musgrave et al. 2020's library, AccuracyCalculator v2.8.1).
var evalPMLFlags = []cli.Flag{
	&cli.StringFlag{Name: "protocol", Usage: "standard benchmark preset: cub | cars | sop | inshop (sets the recall ks; inshop takes --query-*/--gallery-*)"},
	&cli.StringFlag{Name: "query-rows", Usage: "`IDX`.npy: integer rows of --emb that are the queries; every row is the gallery, each query's own row excluded by index (PML's ref_includes_query)"},
	&cli.StringFlag{Name: "average", Value: "query", Usage: "how k-NN metrics pool queries: query (mean over queries) | per-class (mean over classes of each class's mean; PML's avg_of_avgs)"},
	&cli.BoolFlag{Name: "per-class", Usage: "also report every class's k-NN metrics (JSON \"per_class\", a second table otherwise)"},
	&cli.StringFlag{Name: "pml-k", Usage: "with --compat pml: PML's explicit k (`K` or max_bin_count), the window of MRR and mean_average_precision; non-standard: when a class is larger, MAP@R sums over the first K and still divides by R, R-Precision divides by K (warned)"},
}

// protocol is a standard evaluation preset.
type protocol struct {
	ks           []int
	queryGallery bool
	// the standard test split's size, to warn when the files differ
	n, queries, gallery int
	what                string
}

// protocols: recall ks and test splits as the deep-metric-learning
// literature reports them (Oh Song et al. 2016 for CUB-200-2011, Cars196 and
// Stanford Online Products; Liu et al. 2016 for In-Shop's query/gallery
// split).
var protocols = map[string]protocol{
	"cub":    {ks: []int{1, 2, 4, 8}, n: 5924, what: "CUB-200-2011 test classes 101–200"},
	"cars":   {ks: []int{1, 2, 4, 8}, n: 8131, what: "Cars196 test classes 99–196"},
	"sop":    {ks: []int{1, 10, 100, 1000}, n: 60502, what: "Stanford Online Products test split"},
	"inshop": {ks: []int{1, 10, 20, 30, 40, 50}, queryGallery: true, queries: 14218, gallery: 12612, what: "In-Shop query/gallery split"},
}

func protocolNames() string {
	var names []string
	for k := range protocols {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// applyProtocol returns the recall ks of --protocol (an explicit --k that
// differs is a usage error) and checks the evaluation mode.
func applyProtocol(c *cli.Context, ks []int, queryGallery bool) ([]int, *protocol, error) {
	name := strings.ToLower(c.String("protocol"))
	if name == "" {
		return ks, nil, nil
	}
	p, ok := protocols[name]
	if !ok {
		return nil, nil, usagef("--protocol %q: unknown (have: %s)", c.String("protocol"), protocolNames())
	}
	if c.IsSet("k") && !slices.Equal(ks, p.ks) {
		return nil, nil, usagef("--protocol %s sets --k %s; drop --k or --protocol", name, joinInts(p.ks))
	}
	if p.queryGallery && !queryGallery {
		return nil, nil, usagef("--protocol %s evaluates queries against a gallery: pass --query-emb, --query-labels, --gallery-emb, --gallery-labels", name)
	}
	if !p.queryGallery && queryGallery {
		return nil, nil, usagef("--protocol %s evaluates one set leave-one-out: pass --emb and --labels", name)
	}
	return p.ks, &p, nil
}

// protocolWarning says when the files are not the standard split's size.
func protocolWarning(name string, p *protocol, res *metrics.Result) string {
	if p == nil {
		return ""
	}
	if p.queryGallery {
		if res.Queries != p.queries || res.Gallery != p.gallery {
			return fmt.Sprintf("--protocol %s: %d queries and a gallery of %d, but the %s has %d and %d: numbers are not comparable with published ones", name, res.Queries, res.Gallery, p.what, p.queries, p.gallery)
		}
		return ""
	}
	if res.N != p.n {
		return fmt.Sprintf("--protocol %s: %d items, but the %s has %d: numbers are not comparable with published ones", name, res.N, p.what, p.n)
	}
	return ""
}

func joinInts(a []int) string {
	s := make([]string, len(a))
	for i, v := range a {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}

// pmlOptions reads --average, --per-class and --pml-k into opt.
func pmlOptions(c *cli.Context, opt *metrics.Options) error {
	switch a := strings.ToLower(c.String("average")); a {
	case "query", "":
		opt.Average = metrics.PerQuery
	case "per-class", "per_class", "class":
		opt.Average = metrics.PerClass
	default:
		return usagef("--average must be query or per-class (got %q)", c.String("average"))
	}
	opt.PerClass = c.Bool("per-class")
	if c.IsSet("pml-k") {
		k := metrics.PMLKMaxBinCount
		if v := c.String("pml-k"); !strings.EqualFold(v, "max_bin_count") {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return usagef("--pml-k must be a positive integer or max_bin_count (got %q)", v)
			}
			k = n
		}
		if !strings.EqualFold(c.String("compat"), "pml") {
			return usagef("--pml-k reproduces pytorch-metric-learning's explicit k and needs --compat pml")
		}
		opt.PMLK = k
	}
	return nil
}

// queryRows reads --query-rows (one-set mode only).
func queryRows(c *cli.Context, in *metrics.Input) error {
	spec := c.String("query-rows")
	if spec == "" {
		return nil
	}
	if in.Gallery != nil {
		return usagef("--query-rows selects queries inside --emb; with --query-*/--gallery-* every query row is a query")
	}
	rows, err := arrays.LoadIndices(spec)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if r < 0 || r >= in.Emb.Rows {
			return fmt.Errorf("%s: entry %d is row %d, but --emb has rows 0..%d", spec, i, r, in.Emb.Rows-1)
		}
	}
	in.QueryRows = rows
	return nil
}

// sizeLine describes who searched what, for the table footers.
func sizeLine(res *metrics.Result) string {
	if res.Queries == res.N && res.Gallery == res.N-1 {
		return fmt.Sprintf("%d items (each searches the other %d)", res.N, res.Gallery)
	}
	return fmt.Sprintf("%d queries, gallery of %d", res.Queries, res.Gallery)
}

// averageNote names per-class averaging in the footers.
func averageNote(res *metrics.Result) string {
	if res.Average == metrics.PerClass {
		return ", k-NN metrics averaged per class"
	}
	return ""
}

// loadQueryPair is loadPair for a query set searched against a separate
// gallery, where a single query is valid.
func loadQueryPair(embSpec, labSpec string) (mat32.Matrix, []int32, error) {
	return loadChecked(embSpec, labSpec, arrays.CheckQueryPair)
}

// classNames fills in.ClassNames (for --per-class) with the original label
// of every id in in.Labels / in.GalleryLabels (for --per-class, --per-query and
// the commands beside eval), read again from the label
// files (small next to the embeddings).
func classNames(c *cli.Context, in *metrics.Input) error {
	if !c.Bool("per-class") && c.String("per-query") == "" && c.Command.Name == "eval" {
		return nil
	}
	type src struct {
		spec string
		ids  []int32
	}
	srcs := []src{{c.String("labels"), in.Labels}}
	if in.Gallery != nil {
		srcs = []src{{c.String("query-labels"), in.Labels}, {c.String("gallery-labels"), in.GalleryLabels}}
	}
	var names []string
	for _, s := range srcs {
		own, ownNames, err := arrays.LoadLabels(s.spec)
		if err != nil {
			return err
		}
		for i, id := range s.ids {
			for int(id) >= len(names) {
				names = append(names, "")
			}
			if i < len(own) && names[id] == "" {
				names[id] = ownNames[own[i]]
			}
		}
	}
	in.ClassNames = names
	return nil
}
