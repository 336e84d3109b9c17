package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/record"
	"github.com/dmlbench/dmlbench/spectra"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/model"
)

func init() {
	d := trainers.Defaults()
	register(&cli.Command{
		Name:      "run",
		Usage:     "train an embedding with a DML loss and record metrics per epoch in run.json",
		UsageText: "dmlbench run --dataset NAME --loss LOSS [--miner M] [--sampler S] --out DIR [options]",
		Description: `Trains an embedding network with Adam: an MLP head on pixels or precomputed features
(--arch mlp, the default) or a small CNN on image data sets (--arch cnn: 3×3 conv blocks of
--channels widths, each ReLU + 2×2 max-pool, then a linear map to --embed-dim), evaluates
the held-out test classes with the same metrics as 'dmlbench eval' every --eval-every
epochs, and writes DIR/run.json (config, versions, per-epoch loss and metrics, initial /
final / best metrics, timings, final test spectrum). With --val-split F, a fraction F of
the training classes is held out as validation and chooses the best epoch (never the
test split). A checkpoint (DIR/checkpoint.gob) is written atomically after every epoch;
after Ctrl-C or a crash, --resume continues and reproduces the uninterrupted run.

Keys of --config (YAML) are the flag names; flags given on the command line override
the file. With --resume and no --config, the config is read back from DIR/run.json.

Examples:
   dmlbench run --dataset omniglot --loss margin --miner distance --sampler spc-2 --epochs 20 --seed 0 --out runs/margin-s0
   dmlbench run --config run.yaml --seed 1 --out runs/ms-s1
   dmlbench run --dataset dir:features/cub --loss multisimilarity --hidden 512 --val-split 0.5 --out runs/cub-ms
   dmlbench run --dataset omniglot --arch cnn --channels 32,64 --loss margin --miner distance --out runs/cnn-margin
   dmlbench run --out runs/margin-s0 --resume
   dmlbench run --dataset omniglot --loss margin --out runs/m --save-embeddings && dmlbench eval --emb runs/m/test_emb.npy --labels runs/m/test_labels.npy --clustering ward
   dmlbench list losses`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "YAML `FILE` with the same keys as the flags"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "run `DIR` (run.json, checkpoint.gob)"},
			&cli.BoolFlag{Name: "resume", Usage: "continue from DIR/checkpoint.gob"},
			&cli.BoolFlag{Name: "save-embeddings", Usage: "also write the final test embeddings as DIR/test_emb.npy and DIR/test_labels.npy (for eval, plot tsne, --clustering)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress output"},
			&cli.StringFlag{Name: "dataset", Value: "omniglot", Usage: "data set (see dmlbench list datasets; dir:PATH for feature files)"},
			&cli.IntFlag{Name: "size", Usage: "image side after downsampling (default per data set)"},
			&cli.StringFlag{Name: "data-path", Usage: "data location override (emoji .npz, fashion-mnist directory)"},
			&cli.Int64Flag{Name: "data-seed", Usage: "seed of synthetic data sets (kept fixed while --seed varies)"},
			&cli.StringFlag{Name: "loss", Usage: "loss (see dmlbench list losses)"},
			&cli.StringFlag{Name: "miner", Usage: "tuple miner for tuple losses (see dmlbench list miners)"},
			&cli.StringFlag{Name: "sampler", Value: d.Sampler, Usage: "batch sampler (see dmlbench list samplers)"},
			&cli.StringFlag{Name: "hyper", Usage: "loss hyper-parameters `k=v,k=v` (see dmlbench list losses)"},
			&cli.StringFlag{Name: "teacher", Usage: "teacher run `DIR` of a teacher-student loss (mpn-distill): a finished mpn-ce run on the same data"},
			&cli.IntFlag{Name: "epochs", Value: d.Epochs, Usage: "training epochs"},
			&cli.IntFlag{Name: "iters-per-epoch", Usage: "steps per epoch (default ⌈N_train / batch⌉)"},
			&cli.IntFlag{Name: "batch-size", Value: d.BatchSize, Usage: "batch size"},
			&cli.Float64Flag{Name: "lr", Value: d.LR, Usage: "Adam learning rate (loss parameters may set their own)"},
			&cli.Float64Flag{Name: "weight-decay", Value: d.WeightDecay, Usage: "L2 weight decay (coupled, as torch Adam)"},
			&cli.StringFlag{Name: "lr-steps", Usage: "epochs after which the learning rate is multiplied by --lr-gamma, e.g. 10,15"},
			&cli.Float64Flag{Name: "lr-gamma", Value: d.LRGamma, Usage: "step-decay factor"},
			&cli.StringFlag{Name: "arch", Value: d.Arch, Usage: "model architecture: mlp | cnn (image data sets only; see dmlbench list archs)"},
			&cli.StringFlag{Name: "hidden", Value: "512", Usage: "mlp hidden widths, e.g. 512,512 (none = linear head)"},
			&cli.StringFlag{Name: "channels", Usage: "cnn conv-block widths, e.g. 32,64 (default) or 32,64,128 for a third block"},
			&cli.IntFlag{Name: "embed-dim", Value: d.EmbedDim, Usage: "embedding dimension"},
			&cli.StringFlag{Name: "norm", Value: d.Norm, Usage: "hidden-layer normalisation: layer | none"},
			&cli.StringFlag{Name: "embed-norm", Usage: "embedding normalisation: l2 | none (default l2; none for losses on raw embeddings: npair, lifted, genlifted, prototypical)"},
			&cli.IntFlag{Name: "chunk", Usage: "rows per forward/backward pass (multistage back-propagation; default = batch)"},
			&cli.IntFlag{Name: "eval-every", Value: d.EvalEvery, Usage: "evaluate every N epochs (the last epoch always)"},
			&cli.Float64Flag{Name: "val-split", Usage: "fraction of training classes held out for best-epoch selection"},
			&cli.StringFlag{Name: "select-by", Value: d.SelectBy, Usage: "validation metric that picks the best epoch"},
			testTimeFlags[0], testTimeFlags[1], testTimeFlags[2], testTimeFlags[3], testTimeFlags[4],
			&cli.StringFlag{Name: "metrics", Usage: "comma-separated metrics (default: all; see dmlbench list metrics)"},
			&cli.StringFlag{Name: "compat", Value: d.Convention, Usage: "metric convention: strict | roth | pml"},
			&cli.StringFlag{Name: "distance", Value: d.Distance, Usage: "evaluation distance: euclidean | cosine | ip"},
			&cli.StringFlag{Name: "backend", Value: knn.ExactName, Usage: "k-NN backend for evaluation: " + strings.Join(knn.Backends.Names(), " | ")},
			&cli.Int64Flag{Name: "seed", Usage: "seed of initialisation, batches, mining"},
			&cli.Float64Flag{Name: "rho-reg", Usage: "ρ-regularisation: switch a mined negative for a positive with probability `P` (tuple losses; R-variants, seed 000 §5; e.g. 0.2)"},
			&cli.StringFlag{Name: "regularizer", Usage: "shorthand for the suite axis: comma list of none, rho[=P], das, mixup"},
			&cli.BoolFlag{Name: "das", Usage: "densely-anchored sampling: add T DFS+MTS embeddings per anchor (seed 003 §3)"},
			&cli.StringFlag{Name: "das-params", Usage: "DAS `T,K,Z,rs,rb` or k=v pairs (default 3,4,10,0.01,0.01)"},
			&cli.BoolFlag{Name: "mixup", Usage: "manifold mixup of embeddings, loss weighted per label entry (seed 000 §H eq. 31)"},
			&cli.Float64Flag{Name: "mixup-alpha", Usage: "mixup interpolation λ ~ Beta(`α`, α) (default 2)"},
		},
		Action: runAction,
	})
}

// runConfig merges the config file (or, with --resume, the run.json config)
// with the flags given explicitly.
func runConfig(c *cli.Context) (trainers.Config, error) {
	var cfg trainers.Config
	out := c.String("out")
	switch {
	case c.IsSet("config"):
		var err error
		if cfg, err = trainers.LoadConfigFile(c.String("config")); err != nil {
			return cfg, err
		}
	case c.Bool("resume"):
		r, err := record.Read(filepath.Join(out, "run.json"))
		if err != nil {
			return cfg, fmt.Errorf("resume: %w", err)
		}
		if err := json.Unmarshal(r.Config, &cfg); err != nil {
			return cfg, fmt.Errorf("resume: config in %s: %w", filepath.Join(out, "run.json"), err)
		}
	}
	set := c.IsSet
	str := func(name string, dst *string) {
		if set(name) {
			*dst = c.String(name)
		}
	}
	num := func(name string, dst *int) {
		if set(name) {
			*dst = c.Int(name)
		}
	}
	flt := func(name string, dst *float64) {
		if set(name) {
			*dst = c.Float64(name)
		}
	}
	str("dataset", &cfg.Dataset)
	str("data-path", &cfg.DataPath)
	num("size", &cfg.Size)
	if set("data-seed") {
		cfg.DataSeed = c.Int64("data-seed")
	}
	str("loss", &cfg.Loss)
	str("miner", &cfg.Miner)
	str("teacher", &cfg.Teacher)
	str("sampler", &cfg.Sampler)
	str("arch", &cfg.Arch)
	str("norm", &cfg.Norm)
	str("embed-norm", &cfg.EmbedNorm)
	str("select-by", &cfg.SelectBy)
	str("compat", &cfg.Convention)
	str("distance", &cfg.Distance)
	num("epochs", &cfg.Epochs)
	num("iters-per-epoch", &cfg.ItersPerEpoch)
	num("batch-size", &cfg.BatchSize)
	num("embed-dim", &cfg.EmbedDim)
	num("chunk", &cfg.Chunk)
	num("eval-every", &cfg.EvalEvery)
	flt("lr", &cfg.LR)
	flt("weight-decay", &cfg.WeightDecay)
	flt("lr-gamma", &cfg.LRGamma)
	flt("val-split", &cfg.ValSplit)
	if set("seed") {
		cfg.Seed = c.Int64("seed")
	}
	if err := regularizerFlags(c, &cfg); err != nil {
		return cfg, err
	}
	if cfg.Dataset == "" {
		cfg.Dataset = c.String("dataset")
	}
	if set("metrics") {
		cfg.Metrics = splitList(c.String("metrics"))
	}
	if set("hidden") {
		cfg.Hidden = []int{}
		if h := strings.TrimSpace(c.String("hidden")); h != "" && h != "none" {
			v, err := parseInts(h)
			if err != nil {
				return cfg, usagef("--hidden: %v", err)
			}
			cfg.Hidden = v
		}
	}
	if set("channels") {
		v, err := parseInts(c.String("channels"))
		if err != nil {
			return cfg, usagef("--channels: %v", err)
		}
		cfg.Channels = v
	}
	if set("lr-steps") {
		v, err := parseInts(c.String("lr-steps"))
		if err != nil {
			return cfg, usagef("--lr-steps: %v", err)
		}
		cfg.LRSteps = v
	}
	if set("hyper") {
		if cfg.Hyper == nil {
			cfg.Hyper = map[string]float64{}
		}
		for _, kv := range splitList(c.String("hyper")) {
			k, v, ok := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if !ok || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return cfg, usagef("--hyper: %q is not name=number", kv)
			}
			cfg.Hyper[strings.TrimSpace(k)] = f
		}
	}
	cfg = cfg.WithDefaults()
	if cfg.Loss == "" {
		return cfg, usagef("--loss is required (see dmlbench list losses)")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

func runAction(c *cli.Context) (err error) {
	if c.NArg() > 0 {
		return usagef("run takes no positional arguments (got %q)", c.Args().First())
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := runConfig(c)
	if err != nil {
		return err
	}
	out := c.String("out")
	quiet := c.Bool("quiet")
	ds, err := fixtures.Load(cfg.Dataset, fixtures.Options{Size: cfg.Size, Path: cfg.DataPath, Seed: cfg.DataSeed})
	if err != nil {
		return err
	}
	if len(ds.Shape) == 3 { // image data: C×H×W for the cnn architecture
		cfg.InChannels, cfg.InHeight, cfg.InWidth = ds.Shape[0], ds.Shape[1], ds.Shape[2]
	}
	if err := model.Check(cfg.ModelConfig(ds.Train.X.Cols)); err != nil {
		return usagef("--arch %s on data set %s: %v", cfg.Arch, cfg.Dataset, err)
	}
	opt := trainers.Options{
		Train:      trainers.Split{X: ds.Train.X, Labels: ds.Train.Labels},
		Test:       trainers.Split{X: ds.Test.X, Labels: ds.Test.Labels},
		Checkpoint: filepath.Join(out, trainers.CheckpointFile),
		Resume:     c.Bool("resume"),
		Spectrum:   spectra.SingularValues,
	}
	if c.Bool("save-embeddings") {
		opt.FinalEmbeddings = func(emb knn.Matrix) error {
			if err := fixtures.SaveNPY(filepath.Join(out, "test_emb.npy"), emb); err != nil {
				return err
			}
			return fixtures.SaveLabelsNPY(filepath.Join(out, "test_labels.npy"), ds.Test.Labels)
		}
	}
	if cfg.ValSplit > 0 {
		// Validation classes: the last round(F·C) training classes
		// (fixtures.ValSplit with a nil RNG, seed 000's half/half protocol).
		tr, val, err := fixtures.ValSplit(ds.Train, cfg.ValSplit, nil)
		if err != nil {
			return err
		}
		opt.Train = trainers.Split{X: tr.X, Labels: tr.Labels}
		opt.Val = trainers.Split{X: val.X, Labels: val.Labels}
	}
	searcher, err := knn.New(c.String("backend"))
	if err != nil {
		return err
	}
	kmeans, err := clusterFunc("kmeans", c.String("backend"), cfg.Convention, 0, 0, 0, searcher)
	if err != nil {
		return err
	}
	metrics.Version = Version
	mopt := metrics.Options{Metrics: cfg.Metrics, Distance: cfg.Distance, Convention: metrics.Convention(cfg.Convention),
		Searcher: searcher, KMeans: kmeans}
	opt.Evaluate = func(ctx context.Context, emb knn.Matrix, labels []int32) (record.Metrics, error) {
		r, err := metrics.Evaluate(ctx, metrics.Input{Emb: emb, Labels: labels}, mopt)
		if err != nil {
			return nil, err
		}
		m := record.Metrics{}
		for k, v := range r.Metrics {
			// run.json is strict JSON: an undefined metric (NaN, e.g. no
			// query with a positive) is left out rather than written.
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				m[k] = v
			}
		}
		return m, nil
	}

	cfgJSON, _ := json.Marshal(cfg)
	run := &record.Run{
		Schema: record.SchemaVersion, Version: Version, Name: filepath.Base(filepath.Clean(out)), Dataset: cfg.Dataset,
		Method: map[string]string{"loss": cfg.Loss, "sampler": cfg.Sampler, "arch": cfg.Arch},
		Seed:   cfg.Seed, Config: cfgJSON, Versions: buildVersions(), Status: "running",
	}
	if cfg.Miner != "" {
		run.Method["miner"] = cfg.Miner
	}
	regularizerMethod(cfg, run.Method)
	runPath := filepath.Join(out, "run.json")
	if !opt.Resume {
		if _, err := os.Stat(opt.Checkpoint); err == nil {
			return fmt.Errorf("%s already holds a checkpoint: continue it with --resume or choose another --out", out)
		}
	}
	testTime, err := setTestTime(c, cfg, &opt, searcher)
	if err != nil {
		return err
	}
	if testTime != "" {
		run.Method["test_time"] = testTime
	}
	if err := record.WriteAtomic(runPath, run); err != nil {
		return err
	}
	opt.OnEpoch = func(r *record.Run) error { return record.WriteAtomic(runPath, r) }
	opt.OnProgress = newRunProgress(quiet, cfg, opt.Train.X.Rows)

	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v (the checkpoint of the last finished epoch is kept; continue with --resume)\n%s", r, debug.Stack())
			run.Status = "failed"
			_ = record.WriteAtomic(runPath, run)
		}
	}()
	terr := trainers.Train(ctx, cfg, opt, run)
	if terr != nil && run.Status != "interrupted" {
		run.Status = "failed"
	}
	if werr := record.WriteAtomic(runPath, run); werr != nil {
		return errors.Join(terr, werr)
	}
	if terr != nil {
		if errors.Is(terr, trainers.ErrInterrupted) {
			return fmt.Errorf("%w; continue with: dmlbench run --out %s --resume", terr, out)
		}
		return terr
	}
	if !quiet {
		fmt.Fprintf(os.Stderr, "initial R@1 %.4f → final R@1 %.4f; wrote %s\n", run.Initial["R@1"], run.Final["R@1"], runPath)
	}
	return nil
}

func buildVersions() map[string]string {
	v := map[string]string{"dmlbench": Version, "go": runtime.Version(), "blas": model.BLASName}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "gorgonia.org/gorgonia", "gorgonia.org/tensor", "gonum.org/v1/gonum":
				v[d.Path] = d.Version
			}
		}
	}
	return v
}

// newRunProgress shows a progress bar (terminal) or one line per epoch
// (otherwise) on stderr; nil when quiet.
func newRunProgress(quiet bool, cfg trainers.Config, nTrain int) func(trainers.Progress) {
	if quiet {
		return nil
	}
	iters := cfg.ItersPerEpoch
	if iters == 0 {
		iters = (nTrain + cfg.BatchSize - 1) / cfg.BatchSize
	}
	r1 := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.4f", v)
	}
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		start := time.Now()
		return func(p trainers.Progress) {
			if p.Phase == "train" && p.Iter == p.Iters {
				fmt.Fprintf(os.Stderr, "epoch %d/%d loss %.5f (%.1f s)\n", p.Epoch, p.Epochs, p.Loss, time.Since(start).Seconds())
			}
			if p.Phase == "eval" && p.Epoch == 0 {
				fmt.Fprintln(os.Stderr, "evaluating the untrained model")
			}
		}
	}
	bar := progressbar.NewOptions(cfg.Epochs*iters,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetDescription("training"))
	return func(p trainers.Progress) {
		switch p.Phase {
		case "train":
			bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f R@1 %s", p.Epoch, p.Epochs, p.Loss, r1(p.LastR1)))
			_ = bar.Set((p.Epoch-1)*iters + p.Iter)
			if p.Epoch == p.Epochs && p.Iter == p.Iters {
				_ = bar.Finish()
				fmt.Fprintln(os.Stderr)
			}
		case "eval":
			bar.Describe(fmt.Sprintf("epoch %d/%d evaluating… R@1 %s", p.Epoch, p.Epochs, r1(p.LastR1)))
		}
	}
}
