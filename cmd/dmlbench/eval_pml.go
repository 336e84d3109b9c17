package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
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

// applyProtocol returns the recall ks of --protocol (an explicit --k that
// differs is a usage error) and checks the evaluation mode.
func applyProtocol(c *cli.Context, ks []int, queryGallery bool) ([]int, *metrics.Protocol, error) {
	name := strings.ToLower(c.String("protocol"))
	if name == "" {
		return ks, nil, nil
	}
	p, ok := metrics.LookupProtocol(name)
	if !ok {
		return nil, nil, usagef("--protocol %q: unknown (have: %s)", c.String("protocol"), strings.Join(metrics.ProtocolNames(), ", "))
	}
	if c.IsSet("k") && !slices.Equal(ks, p.Ks) {
		return nil, nil, usagef("--protocol %s sets --k %s; drop --k or --protocol", name, joinInts(p.Ks))
	}
	if p.QueryGallery && !queryGallery {
		return nil, nil, usagef("--protocol %s evaluates queries against a gallery: pass --query-emb, --query-labels, --gallery-emb, --gallery-labels", name)
	}
	if !p.QueryGallery && queryGallery {
		return nil, nil, usagef("--protocol %s evaluates one set leave-one-out: pass --emb and --labels", name)
	}
	return slices.Clone(p.Ks), &p, nil
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
		if opt.Convention != metrics.PML && opt.Convention != metrics.PML3 {
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

// classNames fills in.ClassNames (for --per-class) with the original label
// of every id in in.Labels / in.GalleryLabels (arrays.OriginalNames), for
// --per-class, --per-query and the commands beside eval.
func classNames(c *cli.Context, emb string, in *metrics.Input) error {
	if !c.Bool("per-class") && c.String("per-query") == "" && c.Command.Name == "eval" {
		return nil
	}
	specs, ids := []string{evalLabels(c, emb)}, [][]int32{in.Labels}
	if in.Gallery != nil {
		specs, ids = []string{c.String("query-labels"), c.String("gallery-labels")}, [][]int32{in.Labels, in.GalleryLabels}
	}
	names, err := arrays.OriginalNames(specs, ids)
	in.ClassNames = names
	return err
}
