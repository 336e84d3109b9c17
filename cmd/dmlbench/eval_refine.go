package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/testtime"
)

// refineEmbeddings applies test-time refinement (Seidenschwarz et al. 2021 §3) with the MPN
// of the finished run dir to emb, in batches built per sample by
// --test-time.
func refineEmbeddings(c *cli.Context, dir string, emb mat32.Matrix, searcher knn.Searcher) (mat32.Matrix, error) {
	mode := strings.ToLower(c.String("test-time"))
	if mode == "none" || !slices.Contains(testtime.Modes, mode) {
		return mat32.Matrix{}, usagef("--test-time %q: want reciprocal, knn or cluster with --refine", mode)
	}
	tt, err := testTimeOptions(c, mode, c.Int64("seed"), searcher)
	if err != nil {
		return mat32.Matrix{}, err
	}
	ref, dim, err := trainers.LoadRefiner(dir)
	if err != nil {
		return mat32.Matrix{}, err
	}
	if emb.Cols != dim {
		return mat32.Matrix{}, fmt.Errorf("--refine %s: the run embeds into %d dimensions but the embeddings have %d", dir, dim, emb.Cols)
	}
	return testtime.Refine(c.Context, emb, ref, tt)
}

// testTimeOptions reads the --test-time-* flags of eval --refine for the batch construction mode.
func testTimeOptions(c *cli.Context, mode string, seed int64, searcher knn.Searcher) (testtime.Options, error) {
	tt := testtime.Options{Mode: mode, K: c.Int("test-time-k"), KR: c.Int("test-time-kr"), Chunks: c.Int("test-time-n"),
		Clusterer: c.String("test-time-cluster"), Seed: seed, Searcher: searcher}
	if tt.K < 0 || tt.KR < 0 || tt.Chunks < 0 {
		return tt, usagef("--test-time-k, --test-time-kr and --test-time-n must be positive")
	}
	return tt, nil
}
