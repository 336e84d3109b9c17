package metrics

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// retrievalStage runs the one k-NN search (metric on q against g, already
// prepared by prepareDistance), stores the retrieval metrics, per-class
// results and their warnings, and times the search and the metrics apart.
func (e *evalRun) retrievalStage(ctx context.Context, metric knn.Metric, q, g mat32.Matrix) error {
	t0 := time.Now()
	plan, vals, sums, err := e.searchAndScore(ctx, metric, q, g, planExtras{})
	if err != nil {
		return err
	}
	if plan.record != nil {
		e.res.PerQuery = plan.record.table(plan, e.w.asked, e.classNamer())
	}
	e.res.Timings["knn"] = time.Since(t0).Seconds()
	t1 := time.Now()
	e.retrievalResults(plan, vals, func() ([]int32, []map[string]float64, []int) { return plan.classValues(sums) }, sums.lone, sums.padded)
	e.res.Timings["retrieval_metrics"] = time.Since(t1).Seconds()
	return nil
}

// retrievalPlan fixes the k-NN plan of the run (x: the rows searched, the
// default all) and the search options that go with it.
func (e *evalRun) retrievalPlan(s knn.Searcher, metric knn.Metric, q, g mat32.Matrix, x planExtras) (*retrievalPlan, knn.Options, error) {
	opt := e.opt
	x.pmlK = pmlK(opt.PMLK, e.qLabels, e.gLabels, e.rowMask, e.classes, e.loo)
	x.rows, x.perClass, x.budget = e.rowMask, opt.PerClass || e.avg == PerClass, opt.neighbourBudget
	// Strict reads watched ranks only from a searcher that makes them the
	// exact distances' (knn.Watch.Band); others search as deep as the
	// ranks' window, whose lists the recheck certifies.
	canWatch := knn.Watches(s) && (e.conv != Strict || knn.WatchesExactly(s))
	plan, err := newRetrievalPlan(e.conv, e.w, e.qLabels, e.gLabels, e.classes, e.loo, canWatch, x)
	if err != nil {
		return nil, knn.Options{}, inputErr("%v", err)
	}
	if err := plan.depthGuard(q.Rows); err != nil {
		return nil, knn.Options{}, err
	}
	kopt := knn.Options{Metric: metric, Exclude: plan.exclude, Threads: opt.Threads}
	if plan.rank1000 {
		kopt.Watch = plan.positives()
	}
	if opt.Progress != nil {
		kopt.Progress = func(done, total int) { opt.Progress("knn", done, total) }
	}
	return plan, kopt, nil
}

// searchAndScore plans, runs and scores the k-NN search of the rows x
// names (all by default); every scored query's values are recorded when
// Options.PerQuery asks or the run is a shard (x.ranged).
func (e *evalRun) searchAndScore(ctx context.Context, metric knn.Metric, q, g mat32.Matrix, x planExtras) (*retrievalPlan, map[string]float64, *retrievalSums, error) {
	var s knn.Searcher = knn.Exact{}
	if e.opt.Backend.Searcher != nil {
		s = e.opt.Backend.Searcher
	}
	plan, kopt, err := e.retrievalPlan(s, metric, q, g, x)
	if err != nil {
		return nil, nil, nil, err
	}
	switch {
	case x.ranged:
		plan.record = plan.newQueryRecord(x.lo, x.hi)
	case e.opt.PerQuery:
		plan.record = plan.newQueryRecord(0, q.Rows)
	}
	if e.conv == Strict {
		plan.recheck = newRecheck(plan, metric, q, g)
		if isCosine(e.opt.Distance) {
			plan.recheck.cosine(e.in.Emb, e.gallery)
		}
	}
	vals, sums, err := plan.search(ctx, s, q, g, kopt, e.opt.Threads)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("k-NN search (%s, depth %d): %w", s.Name(), plan.depth, err)
	}
	return plan, vals, sums, nil
}

// classNamer maps a dense class id to its label as results name it.
func (e *evalRun) classNamer() func(int32) string {
	values, names := labelValues(e.in.Labels, e.gLabelsRaw), e.in.ClassNames
	return func(y int32) string { return className(values[y], names) }
}

// retrievalResults stores the k-NN metrics vals (per-query means), the
// per-class values classes gives (read only when per-class values are
// wanted) and the retrieval warnings: lone queries, and roth's padded
// mAP@1000 windows.
func (e *evalRun) retrievalResults(plan *retrievalPlan, vals map[string]float64, classes func() ([]int32, []map[string]float64, []int), lone, padded int) {
	res := e.res
	if plan.extras.perClass {
		ids, cvals, cq := classes()
		if e.avg == PerClass {
			vals = classAverage(cvals)
		}
		if e.opt.PerClass {
			res.PerClass = classResults(ids, cvals, cq, labelValues(e.in.Labels, e.gLabelsRaw), e.in.ClassNames)
		}
	}
	for k, v := range vals {
		res.Metrics[k] = v
	}
	if undef := undefined(vals); len(undef) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s undefined: no query counts (every query's class has no other item in the gallery); reported as null / n/a", strings.Join(undef, ", ")))
	}
	res.Warnings = append(res.Warnings, rankWarnings(plan, plan.extras.pmlK)...)
	res.PMLK = plan.extras.pmlK
	res.LoneQueries = lone
	res.Warnings = append(res.Warnings, loneWarnings(e.conv, e.loo, lone)...)
	if e.conv == Roth && padded > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("roth mAP@1000: %d queries have fewer than 1000 neighbours; as in Roth et al.'s code faiss's −1 padding reads the last row's label, so the value can exceed 1 (use --compat strict for the clean definition)", padded))
	}
}

// loneWarnings says how the convention scored the lone queries (no other
// item of their class to retrieve); none when there are none.
func loneWarnings(conv Convention, loo bool, lone int) []string {
	if lone <= 0 {
		return nil
	}
	who := fmt.Sprintf("%d lone queries (no other item of their class)", lone)
	if !loo {
		who = fmt.Sprintf("%d lone queries (no gallery item of their class)", lone)
	}
	switch conv {
	case PML:
		return []string{who + " dropped from k-NN metrics (pml convention)"}
	case Strict:
		return []string{who + " score 0 in R@k and are left out of MAP@R, R-Precision, mAP@C, mAP@1000"}
	case Roth:
		if loo {
			return []string{who + " score 0 in R@k, mAP@C and mAP@1000 and are left out of MAP@R, R-Precision (roth convention)"}
		}
		return []string{who + " score 0 in R@k and are left out of MAP@R, R-Precision, mAP@C, mAP@1000 (roth convention)"}
	}
	return nil
}

// clusteringStage clusters the query rows into --clusters groups (default:
// one per class) and stores every asked clustering metric, each timed.
func (e *evalRun) clusteringStage(ctx context.Context) error {
	res := e.res
	t0 := time.Now()
	k := e.opt.Clusters
	if k <= 0 {
		k = res.Classes
	}
	if k > e.cEmb.Rows {
		return inputErr("--clusters %d exceeds the %d items", k, e.cEmb.Rows)
	}
	assign, err := e.kmeans(ctx, k)
	if err != nil {
		return err
	}
	res.Timings["kmeans"] = time.Since(t0).Seconds()
	ct, err := newContingency(e.cLabels, assign)
	if err != nil {
		return err
	}
	for _, d := range builtins {
		if e.w.fam[d.Key] && d.Cluster != nil {
			t := time.Now()
			res.Metrics[d.Key] = d.Cluster(ct)
			res.Timings[strings.ToLower(d.Key)] = time.Since(t).Seconds()
		}
	}
	return nil
}

// kmeans assigns the query rows to k clusters with the convention's k-means
// settings and the seed of --seed (0: the preset's, unless ExactSeed).
func (e *evalRun) kmeans(ctx context.Context, k int) ([]int32, error) {
	opt := e.opt
	// The convention's k-means settings (niter, seed, points per
	// centroid) come from clustering's preset table, which the faiss
	// k-means reads too.
	ko, err := clustering.KMeansPreset(string(e.conv))
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
	if opt.Clustering != nil {
		assign, err = opt.Clustering(e.cEmb, k, seed)
	} else {
		assign, err = e.builtinKMeans(ctx, k, seed)
	}
	if err != nil {
		return nil, fmt.Errorf("k-means (K = %d): %w", k, err)
	}
	return assign, nil
}

// embeddingStage computes the asked whole-embedding metrics (rho,
// dist_ratio, ...) on the query rows, each timed.
func (e *evalRun) embeddingStage() error {
	res := e.res
	for _, d := range builtins {
		if !e.w.fam[d.Key] || d.Embedding == nil {
			continue
		}
		t0 := time.Now()
		// Whole-embedding metrics describe the query rows (cEmb, cLabels).
		win := e.in
		win.Emb = e.cEmb
		v, warn, err := d.Embedding(&WholeInput{Opt: e.opt, Conv: e.conv, In: win, Labels: e.cLabels, Classes: e.classes})
		if err != nil {
			return err
		}
		res.Warnings = append(res.Warnings, warn...)
		res.Metrics[d.Key] = v
		res.Timings[d.Key] = time.Since(t0).Seconds()
	}
	return nil
}
