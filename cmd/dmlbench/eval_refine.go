package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/testtime"
)

// refineEmbeddings applies test-time refinement (Seidenschwarz et al.
// 2021 §3) with the MPN of the finished run dir to emb, in batches built
// per sample by --test-time (trainers.RefineWith).
func refineEmbeddings(c *cli.Context, dir string, emb mat32.Matrix, searcher knn.Searcher) (mat32.Matrix, error) {
	tt := testtime.Options{Mode: strings.ToLower(c.String("test-time")), K: c.Int("test-time-k"), KR: c.Int("test-time-kr"), Chunks: c.Int("test-time-n"),
		Clusterer: c.String("test-time-cluster"), Seed: c.Int64("seed"), Searcher: searcher}
	return trainers.RefineWith(c.Context, dir, emb, tt)
}
