package clustering

import (
	"fmt"
	"sort"
	"strings"
)

// kmeansPresets holds the k-means settings of each evaluation convention,
// the one table that KMeans's callers and FaissKMeans's callers read
// (metrics.Evaluate and the eval command), so that the pure-Go and the
// faiss k-means of one convention never differ in their settings.
//
//   - roth: Roth et al. 2020's evaluation code builds faiss.Clustering(d, K)
//     and sets niter = 20, min_points_per_centroid = 1,
//     max_points_per_centroid = 10⁹ (no subsampling); seed is faiss's
//     default 1234.
//   - pml: pytorch-metric-learning v2.8.1's AccuracyCalculator calls
//     FaissKMeans(niter=20), i.e. faiss.Kmeans(d, K, niter=20) with faiss's
//     other ClusteringParameters defaults: seed 1234,
//     min_points_per_centroid = 39, max_points_per_centroid = 256 (training
//     on a seeded subsample of 256·K rows when there are more).
//   - pml3: pytorch-metric-learning 3 documents no default k-means of its
//     own (FaissKMeans is opt-in there), so pml3 keeps pml's settings.
//   - strict: the project's own convention keeps Roth et al.'s settings
//     (every row trains the centroids).
var kmeansPresets = map[string]KMeansOptions{
	"strict": {NIter: 20, Seed: 1234, MinPointsPerCentroid: 1},
	"roth":   {NIter: 20, Seed: 1234, MinPointsPerCentroid: 1},
	"pml":    {NIter: 20, Seed: 1234, MinPointsPerCentroid: 39, MaxPointsPerCentroid: 256},
	"pml3":   {NIter: 20, Seed: 1234, MinPointsPerCentroid: 39, MaxPointsPerCentroid: 256},
}

// KMeansPreset returns the k-means options of an evaluation convention
// ("strict", "roth", "pml", "pml3"; see kmeansPresets for their sources; "" is
// strict, as in metrics.Options), with Threads and Searcher unset. An
// unknown name is an error wrapping ErrBadInput.
func KMeansPreset(convention string) (KMeansOptions, error) {
	if convention == "" {
		convention = "strict"
	}
	o, ok := kmeansPresets[convention]
	if !ok {
		names := make([]string, 0, len(kmeansPresets))
		for n := range kmeansPresets {
			names = append(names, n)
		}
		sort.Strings(names)
		return KMeansOptions{}, fmt.Errorf("%w: unknown k-means convention %q; have: %s", ErrBadInput, convention, strings.Join(names, ", "))
	}
	return o, nil
}
