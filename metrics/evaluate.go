package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/spectra"
)

// Version is reported in Result.Version; the CLI overrides it.
var Version = "dev"

// ErrInput is wrapped by every error caused by the caller's data.
var ErrInput = errors.New("bad input")

func inputErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...))
}

// Evaluate computes the requested metrics with one k-NN search (depth = the
// largest window any metric needs) and one clustering (NMI, F1, AMI).
func Evaluate(ctx context.Context, in Input, opt Options) (*Result, error) {
	conv := opt.Convention
	if conv == "" {
		conv = Strict
	}
	if conv != Strict && conv != Roth && conv != PML {
		return nil, fmt.Errorf("unknown convention %q (strict, roth, pml)", conv)
	}
	w, err := resolve(opt.Metrics, opt.Ks)
	if err != nil {
		return nil, err
	}
	loo := in.Gallery == nil
	if err := checkInput(in, loo); err != nil {
		return nil, err
	}
	gallery := in.Emb
	gLabelsRaw := in.Labels
	if !loo {
		gallery = *in.Gallery
		gLabelsRaw = in.GalleryLabels
	}
	dense, classes := denseLabels(in.Labels, gLabelsRaw)
	qLabels, gLabels := dense[0], dense[1]
	if distinct(qLabels) < 2 && loo {
		return nil, inputErr("all %d items have one label: retrieval and clustering metrics need at least two classes", len(qLabels))
	}
	res := &Result{Metrics: map[string]float64{}, Convention: conv, N: in.Emb.Rows, Dim: in.Emb.Cols,
		Classes: distinct(qLabels), Timings: map[string]float64{}, Version: Version}
	threads := opt.Threads

	metric, q, g, err := prepareDistance(opt.Distance, in.Emb, gallery, loo)
	if err != nil {
		return nil, err
	}

	if w.stage(Retrieval) {
		t0 := time.Now()
		s := opt.Searcher
		if s == nil {
			s = knn.Exact{}
		}
		plan, err := newRetrievalPlan(conv, w, qLabels, gLabels, classes, loo, knn.Watches(s))
		if err != nil {
			return nil, inputErr("%v", err)
		}
		kopt := knn.Options{Metric: metric, Exclude: plan.exclude, Threads: threads}
		if plan.rank1000 {
			kopt.Watch = plan.positives()
		}
		if opt.Progress != nil {
			kopt.Progress = func(done, total int) { opt.Progress("knn", done, total) }
		}
		vals, sums, err := plan.search(ctx, s, q, g, kopt, threads)
		if err != nil {
			return nil, fmt.Errorf("k-NN search (%s, depth %d): %w", s.Name(), plan.depth, err)
		}
		res.Timings["knn"] = time.Since(t0).Seconds()
		t1 := time.Now()
		for k, v := range vals {
			res.Metrics[k] = v
		}
		if undef := undefined(vals); len(undef) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s undefined: no query counts (every query's class has no other item in the gallery); reported as null / n/a", strings.Join(undef, ", ")))
		}
		res.LoneQueries = sums.lone
		if sums.lone > 0 {
			switch conv {
			case PML:
				res.Warnings = append(res.Warnings, fmt.Sprintf("%d lone queries (no other item of their class) dropped from k-NN metrics (pml convention)", sums.lone))
			case Strict:
				res.Warnings = append(res.Warnings, fmt.Sprintf("%d lone queries (no other item of their class) score 0 in R@k and are left out of MAP@R, R-Precision, mAP@C, mAP@1000", sums.lone))
			case Roth:
				if loo {
					res.Warnings = append(res.Warnings, fmt.Sprintf("%d lone queries (no other item of their class) score 0 in R@k, mAP@C and mAP@1000 and are left out of MAP@R, R-Precision (roth convention)", sums.lone))
				} else {
					res.Warnings = append(res.Warnings, fmt.Sprintf("%d queries whose class has no gallery item score 0 in R@k and are left out of MAP@R, R-Precision, mAP@C, mAP@1000 (roth convention)", sums.lone))
				}
			}
		}
		if conv == Roth && sums.padded > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("roth mAP@1000: %d queries have fewer than 1000 neighbours; as in Roth et al.'s code faiss's −1 padding reads the last row's label, so the value can exceed 1 (use --compat strict for the clean definition)", sums.padded))
		}
		res.Timings["retrieval_metrics"] = time.Since(t1).Seconds()
	}

	if w.stage(Clustering) {
		t0 := time.Now()
		k := opt.Clusters
		if k <= 0 {
			k = res.Classes
		}
		if k > in.Emb.Rows {
			return nil, inputErr("--clusters %d exceeds the %d items", k, in.Emb.Rows)
		}
		// The convention's k-means settings (niter, seed, points per
		// centroid) come from clustering's preset table, which the faiss
		// k-means reads too.
		ko, err := clustering.KMeansPreset(string(conv))
		if err != nil {
			return nil, err
		}
		seed := opt.Seed
		if seed == 0 && !opt.ExactSeed {
			seed = ko.Seed // faiss's default 1234, used by Roth et al. and pytorch-metric-learning
		}
		if seed < math.MinInt32 || seed > math.MaxInt32 {
			// faiss's seed is a C int; the pure-Go k-means would keep only
			// its low 32 bits and silently disagree with faiss.
			return nil, inputErr("k-means seed %d does not fit faiss's 32-bit seed", seed)
		}
		// Clustering always runs on the raw query embeddings, L2, as the peers do.
		var assign []int32
		if opt.KMeans != nil {
			assign, err = opt.KMeans(in.Emb, k, seed)
		} else {
			// The built-in k-means (clustering.KMeans: faiss's algorithm and
			// random streams, assigned with its own pruned exact kernel);
			// faiss backends bring faiss's k-means via opt.KMeans instead.
			ko.Seed, ko.Threads = seed, threads
			var r *clustering.KMeansResult
			r, err = clustering.KMeans(ctx, in.Emb, k, ko)
			if r != nil {
				assign = r.Assign
			}
		}
		if err != nil {
			return nil, fmt.Errorf("k-means (K = %d): %w", k, err)
		}
		res.Timings["kmeans"] = time.Since(t0).Seconds()
		ct, err := newContingency(qLabels, assign)
		if err != nil {
			return nil, err
		}
		for _, d := range All {
			if w.fam[d.Key] && d.Cluster != nil {
				t := time.Now()
				res.Metrics[d.Key] = d.Cluster(ct)
				res.Timings[strings.ToLower(d.Key)] = time.Since(t).Seconds()
			}
		}
	}

	for _, d := range All {
		if !w.fam[d.Key] || d.Embedding == nil {
			continue
		}
		t0 := time.Now()
		v, warn, err := d.Embedding(&WholeInput{Opt: opt, Conv: conv, In: in, Labels: qLabels, Classes: classes})
		if err != nil {
			return nil, err
		}
		res.Warnings = append(res.Warnings, warn...)
		res.Metrics[d.Key] = v
		res.Timings[d.Key] = time.Since(t0).Seconds()
	}
	total := 0.0
	for _, v := range res.Timings {
		total += v
	}
	res.Timings["total"] = total
	res.Metrics, res.Extra = w.split(res.Metrics)
	return res, nil
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
// and --distance cosine use the cosine distance.
func distRatioMetric(e *WholeInput) (float64, []string, error) {
	cos := e.Conv == Roth || strings.EqualFold(e.Opt.Distance, "cosine")
	v, warn := distRatio(e.In.Emb, e.Labels, e.Classes, cos, e.Opt.Seed, e.Opt.Threads)
	return v, warn, nil
}

// prepareDistance maps --distance to a knn metric and the rows to search.
// cosine: rows are L2-normalised and searched by inner product.
func prepareDistance(distance string, q, g knn.Matrix, loo bool) (knn.Metric, knn.Matrix, knn.Matrix, error) {
	switch strings.ToLower(distance) {
	case "", "euclidean", "l2":
		return knn.L2, q, g, nil
	case "ip", "dot":
		return knn.IP, q, g, nil
	case "cosine", "cos":
		qn := normalizedCopy(q)
		gn := qn
		if !loo {
			gn = normalizedCopy(g)
		}
		return knn.IP, qn, gn, nil
	}
	return 0, q, g, fmt.Errorf("unknown distance %q (euclidean, cosine, ip)", distance)
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

func checkSet(what string, m knn.Matrix, labels []int32) error {
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
