package metrics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/spectra"
)

// ErrInput is wrapped by every error caused by the caller's data.
var ErrInput = errors.New("bad input")

func inputErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...))
}

// Evaluate computes the requested metrics with one k-NN search (depth = the
// largest window any metric needs) and one clustering (NMI, F1, AMI). The
// stages run in order: resolve the options, check and prepare the inputs,
// the k-NN search and its metrics, k-means and its metrics, the
// whole-embedding metrics, then the timings and the asked/extra split.
func Evaluate(ctx context.Context, in Input, opt Options) (*Result, error) {
	e, err := newEvalRun(in, opt)
	if err != nil {
		return nil, err
	}
	metric, q, g, err := prepareDistance(opt.Distance, in.Emb, e.gallery, e.loo)
	if err != nil {
		return nil, err
	}
	if e.w.stage(Retrieval) {
		if err := e.retrievalStage(ctx, metric, q, g); err != nil {
			return nil, err
		}
	}
	if e.w.stage(Clustering) {
		if err := e.clusteringStage(ctx); err != nil {
			return nil, err
		}
	}
	if err := e.embeddingStage(); err != nil {
		return nil, err
	}
	return e.finish(), nil
}

// evalRun is one Evaluate call: its resolved settings, the prepared labels
// and rows every stage reads, and the Result the stages fill in.
type evalRun struct {
	in   Input
	opt  Options
	conv Convention
	avg  Average
	w    want
	loo  bool
	// rowMask marks the --query-rows queries (nil: every row is a query).
	rowMask []bool
	// gallery and gLabelsRaw: the searched set and its caller labels
	// (the queries themselves when leaving one out).
	gallery    mat32.Matrix
	gLabelsRaw []int32
	// qLabels, gLabels: dense class ids 0..classes−1 shared by both sets.
	qLabels, gLabels []int32
	classes          int
	// cEmb, cLabels: the query rows, which clustering, rho and dist_ratio
	// describe.
	cEmb    mat32.Matrix
	cLabels []int32
	res     *Result
}

// resolveOptions checks the convention, metric names, averaging and pml k
// of opt, filling in the defaults (strict, per-query averaging).
func resolveOptions(opt Options) (Convention, Average, want, error) {
	conv := opt.Convention
	if conv == "" {
		conv = Strict
	}
	if conv == PML3 {
		conv = PML
	}
	if conv != Strict && conv != Roth && conv != PML {
		return "", "", want{}, fmt.Errorf("unknown convention %q (strict, roth, pml, pml3)", conv)
	}
	w, err := resolve(opt.Metrics, opt.Ks)
	if err != nil {
		return "", "", want{}, err
	}
	if err := applyConventions(w, opt.Metrics, conv); err != nil {
		return "", "", want{}, err
	}
	avg := opt.Average
	if avg == "" {
		avg = PerQuery
	}
	if avg != PerQuery && avg != PerClass {
		return "", "", want{}, fmt.Errorf("unknown average %q (query, per-class)", opt.Average)
	}
	if opt.PMLK < PMLKMaxBinCount || (opt.PMLK != 0 && conv != PML) {
		return "", "", want{}, fmt.Errorf("pml k = %d: an explicit k is pytorch-metric-learning's and needs the pml convention (and k ≥ 1)", opt.PMLK)
	}
	return conv, avg, w, nil
}

// newEvalRun resolves opt, checks in, and prepares the labels, the query
// subset and the empty Result.
func newEvalRun(in Input, opt Options) (*evalRun, error) {
	conv, avg, w, err := resolveOptions(opt)
	if err != nil {
		return nil, err
	}
	e := &evalRun{in: in, opt: opt, conv: conv, avg: avg, w: w, loo: in.Gallery == nil}
	if err := checkInput(in, e.loo); err != nil {
		return nil, err
	}
	if in.QueryRows != nil {
		if !e.loo {
			return nil, inputErr("query rows select queries inside one set; with a separate gallery every query row is a query")
		}
		if conv == Roth {
			return nil, inputErr("query rows: Roth et al. 2020's evaluation code has no query subsets; use --compat strict or pml")
		}
		if e.rowMask, err = queryRowMask(in.QueryRows, in.Emb.Rows); err != nil {
			return nil, err
		}
	}
	e.gallery, e.gLabelsRaw = in.Emb, in.Labels
	if !e.loo {
		e.gallery, e.gLabelsRaw = *in.Gallery, in.GalleryLabels
	}
	dense, classes := denseLabels(in.Labels, e.gLabelsRaw)
	e.qLabels, e.gLabels, e.classes = dense[0], dense[1], classes
	// pytorch-metric-learning scores a one-label set (every neighbour
	// matches; NMI = AMI = 1 for one class in one cluster).
	if distinct(e.qLabels) < 2 && e.loo && conv != PML {
		return nil, inputErr("all %d items have one label: retrieval and clustering metrics need at least two classes", len(e.qLabels))
	}
	e.cEmb, e.cLabels = in.Emb, e.qLabels
	if e.rowMask != nil {
		e.cEmb, e.cLabels = subsetRows(in.Emb, e.qLabels, in.QueryRows)
	}
	e.res = &Result{Metrics: map[string]float64{}, Convention: conv, N: in.Emb.Rows, Dim: in.Emb.Cols,
		Classes: distinct(e.cLabels), Queries: e.cEmb.Rows, Gallery: e.gallery.Rows, Average: avg,
		Timings: map[string]float64{}, Version: cmp.Or(opt.Version, "dev")}
	if e.loo {
		e.res.Gallery--
	}
	if opt.Convention == PML3 {
		e.res.Convention = PML3
	}
	if err := e.checkFloat32(); err != nil {
		return nil, err
	}
	return e, nil
}

// finish totals the stage timings and splits the metrics into the asked
// ones and the extras computed along the way.
func (e *evalRun) finish() *Result {
	res := e.res
	total := 0.0
	for _, v := range res.Timings {
		total += v
	}
	res.Timings["total"] = total
	res.Metrics, res.Extra = e.w.split(res.Metrics)
	return res
}

// undefined lists, in key order, the metrics of m that are NaN: means over
// no query.
func undefined(m map[string]float64) []string {
	var out []string
	for _, k := range Keys(m) {
		if math.IsNaN(m[k]) {
			out = append(out, k)
		}
	}
	return out
}

// rhoMetric is ρ (Roth et al. 2020, §5): the KL divergence of the uniform
// distribution from the normalised singular values of the embedding matrix.
func rhoMetric(e *WholeInput) (float64, []string, error) {
	s, err := spectra.SingularValues(e.In.Emb)
	if err != nil {
		return 0, nil, fmt.Errorf("spectrum: %w", err)
	}
	if e.Conv == Roth && len(s) > 1 {
		// TruncatedSVD(n_components = D−1) never returns the smallest value.
		s = s[:len(s)-1]
	}
	rho, err := spectra.Rho(s, 1)
	if err != nil {
		return 0, nil, fmt.Errorf("rho: %w", err)
	}
	var warn []string
	if math.IsInf(rho, 0) {
		warn = append(warn, "rho is +Inf: the embedding matrix is rank-deficient (a zero singular value)")
	}
	return rho, warn, nil
}

// distRatioMetric is π_ratio (Roth et al. 2020, §5), see distRatio; roth
// and --distance cosine use the cosine distance; roth takes the class means
// of the rows as given (metrics/dists.py).
func distRatioMetric(e *WholeInput) (float64, []string, error) {
	cos := e.Conv == Roth || strings.EqualFold(e.Opt.Distance, "cosine")
	return distRatio(e.In.Emb, e.Labels, e.Classes, cos, e.Conv == Roth, e.Opt.Seed, e.Opt.Threads)
}

// prepareDistance maps --distance to a knn metric and the rows to search.
// cosine: rows are L2-normalised and searched by inner product.
func prepareDistance(distance string, q, g mat32.Matrix, loo bool) (knn.Metric, mat32.Matrix, mat32.Matrix, error) {
	switch strings.ToLower(distance) {
	case "", "euclidean", "l2":
		return knn.L2, q, g, nil
	case "ip", "dot":
		return knn.IP, q, g, nil
	case "cosine", "cos":
		sets := map[string]mat32.Matrix{"row": q}
		if !loo {
			sets = map[string]mat32.Matrix{"query row": q, "gallery row": g}
		}
		for _, what := range []string{"row", "query row", "gallery row"} {
			if m, ok := sets[what]; ok {
				if i := firstZeroRow(m); i >= 0 {
					return 0, q, g, inputErr("--distance cosine: %s %d is a zero vector, whose cosine distance to any row is undefined (remove it, or use --distance euclidean)", what, i)
				}
			}
		}
		qn := normalizedCopy(q)
		gn := qn
		if !loo {
			gn = normalizedCopy(g)
		}
		return knn.IP, qn, gn, nil
	}
	return 0, q, g, fmt.Errorf("unknown distance %q (euclidean, cosine, ip)", distance)
}

// isCosine reports whether --distance names the cosine distance.
func isCosine(distance string) bool {
	d := strings.ToLower(distance)
	return d == "cosine" || d == "cos"
}

func checkInput(in Input, loo bool) error {
	if err := checkSet("embeddings", in.Emb, in.Labels); err != nil {
		return err
	}
	if loo {
		if in.Emb.Rows < 2 {
			return inputErr("need at least 2 embeddings, got %d", in.Emb.Rows)
		}
		return nil
	}
	if err := checkSet("gallery embeddings", *in.Gallery, in.GalleryLabels); err != nil {
		return err
	}
	if in.Gallery.Cols != in.Emb.Cols {
		return inputErr("query dimension %d differs from gallery dimension %d", in.Emb.Cols, in.Gallery.Cols)
	}
	return nil
}

func checkSet(what string, m mat32.Matrix, labels []int32) error {
	if m.Rows == 0 || m.Cols == 0 {
		return inputErr("%s are empty (%d×%d)", what, m.Rows, m.Cols)
	}
	if len(m.Data) != m.Rows*m.Cols {
		return inputErr("%s: data length %d does not match shape %d×%d", what, len(m.Data), m.Rows, m.Cols)
	}
	if len(labels) != m.Rows {
		return inputErr("%s have %d rows but there are %d labels", what, m.Rows, len(labels))
	}
	for i, v := range m.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return inputErr("%s: row %d contains %v", what, i/m.Cols, v)
		}
	}
	return nil
}
