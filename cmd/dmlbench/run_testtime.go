package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/testtime"
)

// testTimeFlags configure test-time refinement with a trained MPN
// (seed 001 §3; trainers/testtime).
var testTimeFlags = []cli.Flag{
	&cli.StringFlag{Name: "test-time", Value: "none", Usage: "after training, also score the test split refined by the loss's MPN in batches built per sample: none | knn | reciprocal | cluster (seed 001 §3; loss mpn-ce) into run.json final_refined"},
	&cli.IntFlag{Name: "test-time-k", Usage: "k of the reciprocal k-NN sets, or the chunk size of knn/cluster batches (default 10)"},
	&cli.IntFlag{Name: "test-time-kr", Usage: "reciprocal batch size k_r (default 2k)"},
	&cli.IntFlag{Name: "test-time-n", Usage: "chunks per knn/cluster batch (default 8)"},
	&cli.StringFlag{Name: "test-time-cluster", Usage: "clustering of --test-time cluster (default kmeans into N/k clusters; see eval --clustering)"},
}

// testTimeOptions reads the --test-time-* flags (shared by run and eval
// --refine) for the batch construction mode.
func testTimeOptions(c *cli.Context, mode string, seed int64, searcher knn.Searcher) (testtime.Options, error) {
	tt := testtime.Options{Mode: mode, K: c.Int("test-time-k"), KR: c.Int("test-time-kr"), Chunks: c.Int("test-time-n"),
		Clusterer: c.String("test-time-cluster"), Seed: seed, Searcher: searcher}
	if tt.K < 0 || tt.KR < 0 || tt.Chunks < 0 {
		return tt, usagef("--test-time-k, --test-time-kr and --test-time-n must be positive")
	}
	return tt, nil
}

// setTestTime installs opt.Refine from the --test-time flags and returns the
// construction's description for run.json method.test_time ("" when off).
func setTestTime(c *cli.Context, cfg trainers.Config, opt *trainers.Options, searcher knn.Searcher) (string, error) {
	mode := strings.ToLower(c.String("test-time"))
	if !slices.Contains(testtime.Modes, mode) {
		return "", usagef("--test-time %q: want one of %s", mode, strings.Join(testtime.Modes, ", "))
	}
	if mode == "none" {
		return "", nil
	}
	tt, err := testTimeOptions(c, mode, cfg.Seed, searcher)
	if err != nil {
		return "", err
	}
	if l, err := losses.New(cfg.Loss, losses.Config{NumClasses: 2, Dim: cfg.EmbedDim, Miner: cfg.Miner, Hyper: cfg.Hyper}); err == nil {
		if _, ok := l.(losses.Refiner); !ok {
			return "", usagef("--test-time %s needs a loss with a message-passing network (mpn-ce); %s has none", mode, cfg.Loss)
		}
	}
	opt.Refine = func(ctx context.Context, emb knn.Matrix, loss losses.Loss) (knn.Matrix, error) {
		r, ok := loss.(losses.Refiner)
		if !ok {
			return knn.Matrix{}, fmt.Errorf("loss %s cannot refine embeddings", loss.Name())
		}
		return testtime.Refine(ctx, emb, r, tt)
	}
	return tt.String(), nil
}
