package metrics

import (
	"context"
	"fmt"
	"strings"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// checkFloat32 applies clustering.MeasureFloat32's test (float32 overflow,
// underflow, cancellation of ‖x‖² + ‖c‖² − 2⟨x, c⟩) to the rows whose
// distances Evaluate computes: the queries and, when separate, the
// gallery. Strict checks overflow only: it ranks again in float64 every
// query and k-means row whose outcome float32 rounding could change
// (recheck, clustering.Recheck64), so underflow and
// cancellation cost time there, never correctness. See float32Problem for
// what a failed test does.
func (e *evalRun) checkFloat32() error {
	sets := []mat32.Matrix{e.in.Emb}
	if !e.loo {
		sets = append(sets, e.gallery)
	}
	r := clustering.MeasureFloat32(sets...)
	if e.conv == Strict {
		return e.float32Problem(r.CheckOverflow())
	}
	return e.float32Problem(r.Check())
}

// float32Problem turns a float32 range error into an input error under
// strict, and into a warning under roth and pml: their peers compute the
// same float32 expansion, so their numbers are reproduced, but they do not
// describe the embedding.
func (e *evalRun) float32Problem(err error) error {
	if err == nil {
		return nil
	}
	if e.conv == Strict && !e.opt.Float32Warn {
		return fmt.Errorf("%w: %w (--compat roth or pml reproduce the peers' float32 numbers with a warning)", ErrInput, err)
	}
	if e.conv == Strict {
		e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("%v; the metrics are those of the float32 distances", err))
		return nil
	}
	e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("%v; the %s convention reproduces its peers' float32 numbers anyway", err, e.conv))
	return nil
}

// builtinKMeans runs the backend's k-means (Options.Backend.KMeans; when
// unset, the convention's k-means where the searcher searches,
// clustering.KMeansOn) and reports its warnings (faiss's "please provide at least N training
// points", subsampling). Strict makes the final assignment exact where
// float32 rounding could decide it (clustering.Recheck64); roth and pml
// keep the peers' float32 assignment and apply its float32 check
// (float32Problem; once a float32 warning was given, a second one would
// say nothing new).
func (e *evalRun) builtinKMeans(ctx context.Context, k int, seed int64) ([]int32, error) {
	eng := e.opt.Backend.KMeans
	if eng == nil {
		opt, err := clustering.KMeansPreset(string(e.conv))
		if err != nil {
			return nil, err
		}
		opt.Threads = e.opt.Threads
		eng = clustering.KMeansOn(e.opt.Backend.Searcher, opt)
	}
	r, err := eng.Run(ctx, e.cEmb, k, seed)
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		e.res.Warnings = append(e.res.Warnings, "k-means: "+w)
	}
	if e.conv == Strict {
		// The final assignment, exact where rounding could decide it.
		if _, err := clustering.Recheck64(ctx, e.cEmb, r.Centroids, r.Assign, e.opt.Threads); err != nil {
			return nil, err
		}
		e.kmeansRounding(r, e.cLabels, r.Assign)
		return r.Assign, nil
	}
	if err := r.Float32Check(); err != nil && !e.float32Warned() {
		if err := e.float32Problem(err); err != nil {
			return nil, err
		}
	}
	e.kmeansRounding(r, e.cLabels, r.Assign)
	return r.Assign, nil
}

// float32Warned reports whether a float32 range warning is already in the
// result.
func (e *evalRun) float32Warned() bool {
	for _, w := range e.res.Warnings {
		if strings.HasPrefix(w, clustering.ErrFloat32Range.Error()) {
			return true
		}
	}
	return false
}
