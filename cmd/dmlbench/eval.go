package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/trainers"
)

func addEval() {
	register(&cli.Command{
		Name:        "eval",
		Usage:       "score embeddings exported from any framework (.npy / .npz / .pt)",
		UsageText:   "dmlbench eval --emb E.npy --labels L.npy [options]",
		Description: helpText("eval"),
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
			&cli.StringFlag{Name: "backend", Value: knn.ExactName, Usage: "k-NN backend: " + strings.Join(metrics.Backends.Names(), " | ") + " (auto: gpu when a CUDA device is present, else exact; gpu is not yet verified on a device)"},
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
		}, append(append(append(evalPMLFlags(), evalPerQueryFlag()), evalShardFlags()...), evalDistractorFlags()...)...),
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
	ks, err := metrics.ParseKs(c.String("k"))
	if err != nil {
		return err
	}
	ch, err := resolveEvalChoices(c)
	if err != nil {
		return err
	}
	format, embs := c.String("format"), c.StringSlice("emb")
	if err := reports.CheckResultOutputs(format, len(embs), c.String("out"), c.String("refine")); err != nil {
		return err
	}
	if len(embs) == 0 {
		embs = []string{""} // query/gallery mode, or the missing-flag error of loadEvalInput
	}
	if c.Bool("per-class") {
		if err := metrics.CheckPerClass(c.String("metrics")); err != nil {
			return err
		}
	}
	plan := shardPlan(c, embs)
	if err := plan.Check(); err != nil {
		return err
	}
	if merge, handled, err := plan.Execute(c.Context, os.Args[1:], c.App.Writer, c.App.ErrWriter); handled || err != nil {
		return err
	} else if merge != "" {
		if err := c.Set("merge", merge); err != nil {
			return err
		}
	}
	if c.String("per-query") != "" && len(embs) > 1 {
		return usagef("--per-query writes one file; it takes one --emb file (got %d)", len(embs))
	}
	var results []reports.NamedResult
	for _, emb := range embs {
		res, err := evalOne(c, ch, emb, ks)
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
func evalOne(c *cli.Context, ch evalChoices, emb string, ks []int) (*metrics.Result, error) {
	in, err := loadEvalInput(c, emb)
	if err != nil {
		return nil, err
	}
	res, err := evalInput(c, ch, emb, in, ks, c.String("per-query") != "")
	if err != nil {
		return nil, err
	}
	return res, writePerQuery(c, res)
}

// evalInput scores in, read from the embedding file emb ("" in query/gallery
// mode), with the eval options of c and the choices resolved from them;
// perQuery keeps every query's k-NN values (Result.PerQuery).
func evalInput(c *cli.Context, ch evalChoices, emb string, in metrics.Input, ks []int, perQuery bool) (*metrics.Result, error) {
	ks, proto, err := metrics.ResolveProtocol(c.String("protocol"), ks, c.IsSet("k"), in.Gallery != nil)
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
		if in, err = metrics.BinarizeInput(in, c.String("distance")); err != nil {
			return nil, err
		}
	}
	searcher := ch.backend.Searcher
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
		Convention: ch.conv,
		Backend:    ch.backend,
		PerQuery:   perQuery,
	}
	var stopProgress func()
	opt.Progress, stopProgress = stageProgress(c.Bool("quiet"))
	defer stopProgress()
	if m := c.String("metrics"); m != "" {
		opt.Metrics = reports.SplitList(m, ",")
		if c.IsSet("k") {
			if k := metrics.IgnoredK(opt.Metrics, ks); k > 0 {
				return nil, usagef("--k %d would be ignored: --k sets the ks of R@k, so name R@k in --metrics (e.g. --metrics R@k,MAP@R --k 1,10) or list R@%d there", k, k)
			}
		}
	}
	if err := pmlOptions(c, &opt); err != nil {
		return nil, err
	}
	opt.Clustering = ch.clustering
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

// evalFiles are the input files of eval's command line c, scoring emb.
func evalFiles(c *cli.Context, emb string) arrays.EvalFiles {
	return arrays.EvalFiles{Emb: emb, Labels: c.String("labels"), QueryEmb: c.String("query-emb"), QueryLabels: c.String("query-labels"),
		GalleryEmb: c.String("gallery-emb"), GalleryLabels: c.String("gallery-labels"), GalleryBlock: c.Int("gallery-block")}
}

// loadEvalInput reads the input of eval's command line c, scoring emb.
func loadEvalInput(c *cli.Context, emb string) (metrics.Input, error) {
	s, err := evalFiles(c, emb).Load()
	return metrics.Input{Emb: s.Emb, Labels: s.Labels, Gallery: s.Gallery, GalleryLabels: s.GalleryLabels}, err
}
