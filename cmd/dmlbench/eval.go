package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/trainers"
)

func init() {
	register(&cli.Command{
		Name:      "eval",
		Usage:     "score embeddings exported from any framework (.npy / .npz / .pt)",
		UsageText: "dmlbench eval --emb E.npy --labels L.npy [options]",
		Description: `Every item is a query against all others (leave-one-out), or queries search a
separate gallery (In-Shop style). One exact k-NN search serves every retrieval metric;
one k-means serves NMI, F1 and AMI. Conventions: strict (clean definitions, default),
roth (Roth et al. 2020 code, quirks included), pml (pytorch-metric-learning).

Examples (files of the README tour: out/px, runs/margin-s0; or shipped: docs/examples, fixtures/arrays/testdata):
   dmlbench eval --emb out/px/emb.npy --labels out/px/labels.npy
   dmlbench eval --emb docs/examples/features/test_emb.npy --labels docs/examples/features/test_labels.npy --format json > result.json
   dmlbench eval --emb docs/examples/features/test_emb.npy --labels docs/examples/features/test_labels.npy --compat roth
   dmlbench eval --emb out/px/emb.npy --emb runs/margin-s0/test_emb.npy --labels out/px/labels.npy --metrics R@1,MAP@R --format latex
   dmlbench eval --emb docs/examples/query-gallery/gallery.npz:embeddings --labels docs/examples/query-gallery/gallery.npz:labels --metrics R@1,MAP@R --format markdown
   dmlbench eval --query-emb docs/examples/query-gallery/query_emb.npy --query-labels docs/examples/query-gallery/query_labels.npy --gallery-emb docs/examples/query-gallery/gallery_emb.npy --gallery-labels docs/examples/query-gallery/gallery_labels.npy
   dmlbench eval --emb docs/examples/query-gallery/gallery_emb.npy --labels docs/examples/query-gallery/gallery_names.txt --distance cosine --k 1,2,4
   dmlbench eval --emb docs/examples/features/test_emb.npy --labels docs/examples/features/test_labels.npy --clustering dbscan --eps 1.2 --metrics NMI,F1
   dmlbench eval --emb out/px/emb.npy --labels out/px/labels.npy --backend faiss --compat roth   # faiss k-NN and faiss k-means
   dmlbench eval --emb runs/margin-s0/test_emb.npy --labels runs/margin-s0/test_labels.npy --binarize   # Fehérvári et al. 2019: Hamming ranking
   dmlbench eval --emb fixtures/arrays/testdata/torch_dict.pt --k 1,2   # a torch.save dict: its "embeddings" and "labels"
   dmlbench eval --emb docs/examples/features/test_emb.npy --labels docs/examples/features/test_labels.npy --protocol cub   # R@1,2,4,8; warns: not CUB's 5 924 test images
   dmlbench eval --emb docs/examples/query-gallery/gallery_emb.npy --labels docs/examples/query-gallery/gallery_labels.npy --compat pml --average per-class --per-class --format json
   dmlbench eval --emb docs/examples/query-gallery/gallery_emb.npy --labels docs/examples/query-gallery/gallery_labels.npy --query-rows docs/examples/query-gallery/query_rows.npy --compat pml   # queries are rows of --emb

Units: metrics that are fractions in [0, 1] are shown in percent with 2 decimals, rho and
dist_ratio as they are (4 decimals); JSON (--format json, --out) holds the fractions.
--format markdown and latex print one row per --emb file with the metrics as columns
(LaTeX: a booktabs tabular, \usepackage{booktabs}). Under --compat strict mAP@C equals MAP@R
by definition; equal, they share one row "MAP@R = mAP@C". --metrics takes any k for R@k, P@k and
mAP@k (P@5, mAP@100) and pytorch-metric-learning's names (precision_at_1, r_precision,
mean_average_precision_at_r, mean_reciprocal_rank, mean_average_precision, NMI, AMI).

Every output names the queries and the gallery each one searches. A mean over no query (every
query lone) is undefined: n/a in tables, null in JSON. pytorch-metric-learning parity: --compat pml
with --average per-class (avg_of_avgs), --query-rows (ref_includes_query), --pml-k (explicit k).

--binarize thresholds every coordinate at 0 (x > 0 → +1, else −1; Fehérvári et al. 2019 §4) and scores
the ±1 codes: retrieval ranks by Hamming distance, served exactly by L2 on the codes since
Hamming = ‖s − s′‖²/4 (ties by lower index); k-means/NMI/F1/AMI cluster the codes (L2
k-means on ±1 vectors, centroids real-valued), and rho and dist_ratio are computed on the
codes too, so every metric describes the binary embedding. --distance does not apply.`,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "emb", Usage: "embeddings: `FILE`.npy, FILE.npz:key or FILE.pt[:key] (torch.save; float or integer, N×D); repeatable: one row per file (--format markdown|latex), all scored against --labels"},
			&cli.StringFlag{Name: "labels", DefaultText: "the labels the --emb .pt/.npz holds", Usage: "labels: `FILE`.npy / .npz:key / .pt:key (integers or strings) or a text file, one label per line"},
			&cli.StringFlag{Name: "query-emb", Usage: "query embeddings (with --gallery-emb)"},
			&cli.StringFlag{Name: "query-labels", Usage: "query labels"},
			&cli.StringFlag{Name: "gallery-emb", Usage: "gallery embeddings (no self-exclusion)"},
			&cli.StringFlag{Name: "gallery-labels", Usage: "gallery labels"},
			&cli.StringFlag{Name: "metrics", DefaultText: "all", Usage: "comma-separated `NAMES` of metrics (see dmlbench list metrics)"},
			&cli.StringFlag{Name: "k", Value: "1,2,4,8", Usage: "recall ks of R@k (with --metrics, name R@k there)"},
			&cli.StringFlag{Name: "distance", Value: "euclidean", Usage: "euclidean | cosine | ip"},
			&cli.BoolFlag{Name: "binarize", Usage: "threshold coordinates at 0 into ±1 codes and rank by Hamming distance (Fehérvári et al. 2019); all metrics on the codes"},
			&cli.IntFlag{Name: "clusters", DefaultText: "number of distinct labels", Usage: "k-means K"},
			&cli.StringFlag{Name: "clustering", Value: "kmeans", Usage: "clustering for NMI/F1/AMI: kmeans | ward | spectral | birch | dbscan | optics"},
			&cli.Float64Flag{Name: "eps", Value: clustering.DefaultParams().Eps, Usage: "DBSCAN/OPTICS radius (Seidenschwarz et al. 2021, Tab. 4)"},
			&cli.IntFlag{Name: "min-samples", Value: clustering.DefaultParams().MinSamples, Usage: "DBSCAN/OPTICS core-point size"},
			&cli.Int64Flag{Name: "seed", Value: 1234, Usage: "k-means seed (1234 is faiss's)"},
			&cli.IntFlag{Name: "threads", DefaultText: "all cores", Usage: "worker threads (0 = all cores)"},
			&cli.StringFlag{Name: "backend", Value: knn.ExactName, Usage: "k-NN backend: " + strings.Join(knn.Backends.Names(), " | ") + " (auto: gpu when a CUDA device is present, else exact; gpu is not yet verified on a device)"},
			&cli.StringFlag{Name: "compat", Value: "strict", Usage: "convention: strict | roth | pml (pytorch-metric-learning 2.8.1) | pml3 (its version 3, as documented)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table | json | markdown | latex (markdown and latex: one row per --emb file, metrics as columns; latex needs \\usepackage{booktabs})"},
			&cli.StringFlag{Name: "out", Usage: "also write the JSON result to `FILE` (atomically)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar, no warnings"},
			&cli.StringFlag{Name: "refine", Usage: "refine the embeddings with the message-passing network of the finished mpn-ce run `DIR` before scoring (Seidenschwarz et al. 2021 §3; the embeddings must come from that run's backbone, e.g. DIR/test_emb.npy)"},
			&cli.StringFlag{Name: "test-time", Value: "reciprocal", Usage: "with --refine: the batch built around each sample: reciprocal | knn | cluster"},
			&cli.IntFlag{Name: "test-time-k", Value: trainers.Defaults().TestTimeK, Usage: "with --refine: k of the reciprocal k-NN sets, or the chunk size of knn/cluster batches"},
			&cli.IntFlag{Name: "test-time-kr", DefaultText: "2k", Usage: "with --refine: reciprocal batch size k_r"},
			&cli.IntFlag{Name: "test-time-n", Value: trainers.Defaults().TestTimeN, Usage: "with --refine: chunks per knn/cluster batch"},
			&cli.StringFlag{Name: "test-time-cluster", Usage: "with --refine --test-time cluster: the clustering (default kmeans into N/k clusters)"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the evaluation to `FILE` (go tool pprof)"},
		}, append(append(append(evalPMLFlags, evalPerQueryFlag), evalShardFlags...), evalDistractorFlags...)...),
		Action: withCPUProfile(evalAction),
	})
}

func evalAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("eval takes no positional arguments (got %q); use --emb and --labels", c.Args().First())
	}
	if err := checkEvalNumbers(c); err != nil {
		return err
	}
	ks, err := parseInts(c.String("k"))
	if err != nil {
		return usagef("--k: %v", err)
	}
	if conv := c.String("compat"); !slices.Contains(metrics.Conventions(), conv) {
		hint := ""
		if near := suggest.Nearest(conv, metrics.Conventions()); near != "" {
			hint = fmt.Sprintf("; did you mean %s?", near)
		} else if strings.Contains(strings.ToLower(conv), "py") || strings.Contains(strings.ToLower(conv), "torch") {
			hint = " (pytorch-metric-learning is pml)"
		}
		return usagef("--compat %q: want strict, roth, pml or pml3%s", conv, hint)
	}
	format := c.String("format")
	if !slices.Contains(reports.ResultFormats, format) {
		return usagef("--format must be table, json, markdown or latex (got %q)", format)
	}
	embs := c.StringSlice("emb")
	if len(embs) > 1 {
		switch {
		case format == "json":
			return usagef("--format json scores one --emb file (got %d); run eval once per file, or use --format markdown|latex for one row per file", len(embs))
		case c.String("out") != "":
			return usagef("--out writes one result; it takes one --emb file (got %d)", len(embs))
		case c.String("refine") != "":
			return usagef("--refine takes one --emb file (got %d)", len(embs))
		}
	}
	if len(embs) == 0 {
		embs = []string{""} // query/gallery mode, or the missing-flag error of loadEvalInput
	}
	if err := checkPerClassMetrics(c); err != nil {
		return err
	}
	if err := checkShardFlags(c, embs); err != nil {
		return err
	}
	if handled, err := evalExecutor(c); handled || err != nil {
		return err
	}
	if c.String("per-query") != "" && len(embs) > 1 {
		return usagef("--per-query writes one file; it takes one --emb file (got %d)", len(embs))
	}
	var results []reports.NamedResult
	for _, emb := range embs {
		res, err := evalOne(c, emb, ks)
		if errors.Is(err, errShardWritten) {
			return nil
		}
		if err != nil {
			return err
		}
		name := emb
		if name == "" {
			name = c.String("query-emb")
		}
		results = append(results, reports.NamedResult{Name: name, Result: res})
	}
	if err := renameResults(c, results); err != nil {
		return err
	}
	return reports.WriteResults(c.App.Writer, results, format)
}

// evalOne scores one embedding file (emb; "" in query/gallery mode).
func evalOne(c *cli.Context, emb string, ks []int) (*metrics.Result, error) {
	in, err := loadEvalInput(c, emb)
	if err != nil {
		return nil, err
	}
	res, err := evalInput(c, emb, in, ks, c.String("per-query") != "")
	if err != nil {
		return nil, err
	}
	return res, writePerQuery(c, res)
}

// evalInput scores in, read from the embedding file emb ("" in query/gallery
// mode), with the eval options of c; perQuery keeps every query's k-NN
// values (Result.PerQuery).
func evalInput(c *cli.Context, emb string, in metrics.Input, ks []int, perQuery bool) (*metrics.Result, error) {
	ks, proto, err := applyProtocol(c, ks, in.Gallery != nil)
	if err != nil {
		return nil, err
	}
	if err := queryRows(c, &in); err != nil {
		return nil, err
	}
	if err := classNames(c, emb, &in); err != nil {
		return nil, err
	}
	if c.Bool("binarize") {
		if d := strings.ToLower(c.String("distance")); d != "euclidean" && d != "l2" {
			return nil, usagef("--binarize ranks by Hamming distance; --distance %s does not apply", c.String("distance"))
		}
		in.Emb = metrics.Binarize(in.Emb)
		if in.Gallery != nil {
			g := metrics.Binarize(*in.Gallery)
			in.Gallery = &g
		}
	}
	searcher, err := knn.New(c.String("backend"))
	if err != nil {
		return nil, err
	}
	if dir := c.String("refine"); dir != "" {
		if in.Gallery != nil {
			return nil, usagef("--refine scores one set leave-one-out; it does not take --query-*/--gallery-*")
		}
		if in.Emb, err = refineEmbeddings(c, dir, in.Emb, searcher); err != nil {
			return nil, err
		}
	}
	opt := metrics.Options{
		Ks:         ks,
		Distance:   c.String("distance"),
		Clusters:   c.Int("clusters"),
		Seed:       c.Int64("seed"),
		ExactSeed:  true, // --seed 0 is seed 0; the flag's own default is 1234
		Threads:    c.Int("threads"),
		Convention: metrics.Convention(c.String("compat")),
		Searcher:   searcher,
		PerQuery:   perQuery,
	}
	var stopProgress func()
	opt.Progress, stopProgress = stageProgress(c.Bool("quiet"))
	defer stopProgress()
	if m := c.String("metrics"); m != "" {
		opt.Metrics = splitList(m)
		if c.IsSet("k") {
			if k := ignoredK(opt.Metrics, ks); k > 0 {
				return nil, usagef("--k %d would be ignored: --k sets the ks of R@k, so name R@k in --metrics (e.g. --metrics R@k,MAP@R --k 1,10) or list R@%d there", k, k)
			}
		}
	}
	if err := pmlOptions(c, &opt); err != nil {
		return nil, err
	}
	opt.KMeans, err = clusterFunc(c.String("clustering"), c.String("backend"), c.String("compat"), c.Int("threads"), c.Float64("eps"), c.Int("min-samples"), searcher)
	if err != nil {
		return nil, err
	}
	opt.Version = Version
	res, err := evaluate(c, in, opt)
	stopProgress()
	if err != nil {
		return nil, err
	}
	if proto != nil {
		if w := proto.Warning(res); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	if !c.Bool("quiet") {
		for _, w := range res.Warnings {
			fmt.Fprintln(c.App.ErrWriter, "warning:", w)
		}
	}
	if p := c.String("out"); p != "" {
		if err := record.WriteAtomic(p, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// checkPerClassMetrics refuses --per-class when --metrics names no k-NN
// metric: the per-class table holds k-NN metrics only, so it would be empty.
func checkPerClassMetrics(c *cli.Context) error {
	m := c.String("metrics")
	if !c.Bool("per-class") || m == "" {
		return nil
	}
	for _, n := range splitList(m) {
		if d, ok := metrics.Lookup(n); !ok || d.Stage == metrics.Retrieval || strings.EqualFold(n, "R@k") {
			return nil // unknown names are Evaluate's error
		}
	}
	return usagef("--per-class reports k-NN metrics (R@k, MAP@R, mAP@C, …) per class; --metrics %s names none", m)
}

func loadEvalInput(c *cli.Context, emb string) (metrics.Input, error) {
	var in metrics.Input
	lab := evalLabels(c, emb)
	qe, ql, ge, gl := c.String("query-emb"), c.String("query-labels"), c.String("gallery-emb"), c.String("gallery-labels")
	qg := qe != "" || ql != "" || ge != "" || gl != ""
	switch {
	case qg && emb != "":
		return in, usagef("use either --emb/--labels or --query-*/--gallery-*, not both")
	case qg && (qe == "" || ql == "" || ge == "" || gl == ""):
		return in, usagef("query/gallery mode needs --query-emb, --query-labels, --gallery-emb and --gallery-labels")
	case !qg && (emb == "" || lab == "" && !holdsMore(emb)):
		return in, usagef("--emb and --labels are required (see dmlbench eval --help)")
	case !qg && lab == "":
		return in, usagef("--labels is required: %s holds no labels (a .pt or .npz that holds them as \"labels\", or an (embeddings, labels) pair, needs none)", emb)
	}
	if !qg {
		qe, ql = emb, lab
	}
	x, y, err := loadPair(c, qe, ql, !qg, qg) // one query against a gallery is valid
	if err != nil {
		return in, err
	}
	in.Emb, in.Labels = x, y
	if qg {
		gx, _, err := loadPair(c, ge, gl, true, false)
		if err != nil {
			return in, err
		}
		if gx.Cols != x.Cols {
			return in, fmt.Errorf("%s has dimension %d but %s has dimension %d", qe, x.Cols, ge, gx.Cols)
		}
		// Labels were remapped per file; map both to one id space by their original names.
		ids, err := arrays.JointLabels(ql, gl)
		if err != nil {
			return in, err
		}
		in.Labels, in.GalleryLabels = ids[0], ids[1]
		in.Gallery = &gx
	}
	return in, nil
}

// holdsMore reports whether an embedding spec names a .pt or .npz file,
// which may hold the labels too.
func holdsMore(spec string) bool {
	l := strings.ToLower(spec)
	return strings.Contains(l, ".pt") || strings.Contains(l, ".npz")
}

// evalLabels is --labels, or the labels the embedding file emb holds
// beside them (arrays.LabelsBeside) when --labels is not given.
func evalLabels(c *cli.Context, emb string) string {
	if l := c.String("labels"); l != "" || emb == "" {
		return l
	}
	l, _ := arrays.LabelsBeside(emb)
	return l
}

// ignoredK returns a k of --k that a --metrics list would not compute (it
// names neither the R@k family nor R@k itself), or 0.
func ignoredK(names []string, ks []int) int {
	asked := map[string]bool{}
	for _, n := range names {
		key, _ := metrics.Canonical(n)
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

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
