//go:build !faiss

package clustering

import (
	"context"
	"errors"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// FaissCompiled reports whether FaissKMeans runs faiss (build tag faiss).
const FaissCompiled = false

// errFaissNotCompiled is returned by FaissKMeans in builds without faiss.
var errFaissNotCompiled = errors.New("faiss k-means is not compiled into this binary (build with -tags faiss after scripts/install-faiss.sh)")

// FaissKMeans is faiss's k-means (see the faiss build); without -tags faiss
// it returns an error so that callers compile in every build.
func FaissKMeans(ctx context.Context, x mat32.Matrix, k int, opt KMeansOptions) (*KMeansResult, error) {
	return nil, errFaissNotCompiled
}

// isFaiss is false: without -tags faiss there is no faiss searcher.
func isFaiss(knn.Searcher) bool { return false }
