package metrics

import (
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Convention selects whose definition of each metric is reproduced.
type Convention string

const (
	// Strict is the clean definition of docs/metrics.md (default).
	Strict Convention = "strict"
	// Roth reproduces Revisiting_Deep_Metric_Learning_PyTorch (Roth et al. 2020), quirks included.
	Roth Convention = "roth"
	// PML reproduces pytorch-metric-learning's AccuracyCalculator (v2.8.1).
	PML Convention = "pml"
	// PML3 names pytorch-metric-learning 3's AccuracyCalculator as its
	// documentation describes it (3.0.0rc1–rc5, 3.0.0, 3.0.1). None of the
	// changes those notes list alters a number of the metrics Evaluate
	// computes under pml, so pml3 scores as pml and reports "pml3"
	// (docs/metrics.md lists each change and why).
	PML3 Convention = "pml3"
)

// Conventions are the convention names Evaluate accepts, in help order.
func Conventions() []string { return []string{string(Strict), string(Roth), string(PML), string(PML3)} }

// Options configure Evaluate. The zero value evaluates every metric with
// the strict convention, Euclidean distance, ks 1,2,4,8.
type Options struct {
	Metrics  []string // metric keys or families ("R@k", "NMI", ...); nil = all
	Ks       []int    // recall ks; nil = 1,2,4,8
	Distance string   // "euclidean" (default), "cosine", "ip"
	Clusters int      // k-means K; 0 = number of distinct labels
	Seed     int64    // k-means seed; 0 = convention default (1234) unless ExactSeed
	// ExactSeed uses Seed as given, 0 included (eval --seed 0).
	ExactSeed  bool
	Threads    int // <= 0: all cores
	Convention Convention
	// Backend is the k-NN search and the k-means of the clustering
	// metrics, resolved once from a backend name (OpenBackend); the zero
	// value is knn.Exact and the convention's k-means on the CPU.
	Backend Backend
	// Clustering, if non-nil, replaces the backend's k-means for NMI, F1
	// and AMI (eval --clustering ward, dbscan, …).
	Clustering KMeansFunc
	// Progress, if non-nil, receives stage progress (stage names: "knn", "kmeans", ...).
	Progress func(stage string, done, total int)
	// Average: how k-NN metrics pool queries ("" = PerQuery, or PerClass).
	Average Average
	// PerClass also reports every class's k-NN metrics (Result.PerClass).
	PerClass bool
	// PerQuery also reports every query's k-NN values (Result.PerQuery).
	PerQuery bool
	// PMLK is pytorch-metric-learning's explicit k (pml convention only;
	// 0 = its default, the whole gallery): the window of MRR and
	// mean_average_precision, and, non-standard, when a class is larger,
	// MAP@R sums over the first k neighbours (still divided by R_q) and
	// R-Precision divides by k.
	// PMLKMaxBinCount is PML's k = "max_bin_count".
	PMLK int
	// Version is reported in Result.Version ("" = "dev").
	Version string
	// Float32Warn reports float32 overflow as a warning under strict
	// instead of an error (roth and pml warn about overflow, underflow and
	// cancellation anyway; strict ranks near-ties again in float64). A
	// training run sets it: a model whose embeddings blow up during
	// training is a result to record, not bad input.
	Float32Warn bool

	// neighbourBudget overrides defaultNeighbourBudget (0: the default);
	// tests lower it to force the chunked search.
	neighbourBudget int
}

// Input is what Evaluate scores. With Gallery nil every row is a query
// against the rest (leave-one-out); otherwise Query rows search Gallery rows.
type Input struct {
	Emb           mat32.Matrix
	Labels        []int32
	Gallery       *mat32.Matrix
	GalleryLabels []int32
	// QueryRows (one set only): the rows that are queries; every row is
	// the gallery and each query's own row is excluded by index
	// (pytorch-metric-learning's ref_includes_query with a query subset).
	// Clustering, rho and dist_ratio use the query rows. nil = every row.
	QueryRows []int
	// ClassNames, optional, names label value v as ClassNames[v] in
	// Result.PerClass (default: the value itself).
	ClassNames []string
}

// Result is the JSON output of `dmlbench eval --format json`.
type Result struct {
	// Metrics holds exactly the metrics asked for (all of them when none
	// were named); NaN marks a mean over no query (null in JSON).
	Metrics map[string]float64 `json:"metrics"`
	// Extra holds values computed along the way that were not asked for
	// (e.g. R-Precision and mAP@C, which come with MAP@R).
	Extra      map[string]float64 `json:"extra,omitempty"`
	Convention Convention         `json:"convention"`
	N          int                `json:"n"`
	Dim        int                `json:"dim"`
	Classes    int                `json:"classes"`
	// Queries is the number of queries; Gallery the items each query
	// searches (N − 1 leave-one-out).
	Queries int `json:"queries"`
	Gallery int `json:"gallery"`
	// Average is how k-NN metrics pool queries: "query" or "per-class".
	Average Average `json:"average"`
	// PMLK is pytorch-metric-learning's explicit k as applied (Options.PMLK,
	// max_bin_count resolved); 0: the whole gallery.
	PMLK int `json:"pml_k,omitempty"`
	// LoneQueries counts queries with no other item of their class.
	LoneQueries int                `json:"lone_queries"`
	Timings     map[string]float64 `json:"timings"`
	Version     string             `json:"version"`
	Warnings    []string           `json:"warnings,omitempty"`
	// KMeansRounding says which k-means assignments float32 rounding
	// could have decided (built-in k-means only; see KMeansRounding).
	KMeansRounding *KMeansRounding `json:"kmeans_rounding,omitempty"`
	// PerClass holds every class's k-NN metrics (Options.PerClass).
	PerClass []ClassResult `json:"per_class,omitempty"`
	// PerQuery holds every query's k-NN values (Options.PerQuery) for the
	// asked k-NN metrics; not part of the JSON result (eval --per-query
	// writes it to a file of its own).
	PerQuery *QueryValues `json:"-"`
}

// KMeansFunc clusters x into k groups and returns one id per row.
type KMeansFunc func(x mat32.Matrix, k int, seed int64) ([]int32, error)
