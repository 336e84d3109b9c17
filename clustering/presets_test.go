package clustering

import (
	"errors"
	"testing"
)

// The presets are the peers' settings (see kmeansPresets): Roth et al.
// 2020's faiss.Clustering (niter 20, min 1, no subsampling) for roth and
// strict, faiss.Kmeans(niter=20) defaults for pytorch-metric-learning.
func TestKMeansPresets(t *testing.T) {
	want := map[string]KMeansOptions{
		"":       {NIter: 20, Seed: 1234, MinPointsPerCentroid: 1},
		"strict": {NIter: 20, Seed: 1234, MinPointsPerCentroid: 1},
		"roth":   {NIter: 20, Seed: 1234, MinPointsPerCentroid: 1},
		"pml":    {NIter: 20, Seed: 1234, MinPointsPerCentroid: 39, MaxPointsPerCentroid: 256},
		"pml3":   {NIter: 20, Seed: 1234, MinPointsPerCentroid: 39, MaxPointsPerCentroid: 256},
	}
	for name, w := range want {
		o, err := KMeansPreset(name)
		if err != nil || o != w {
			t.Errorf("%q: %+v, %v; want %+v", name, o, err, w)
		}
	}
	if _, err := KMeansPreset("sklearn"); !errors.Is(err, ErrBadInput) || err.Error() != `clustering: bad input: unknown k-means convention "sklearn"; have: pml, pml3, roth, strict` {
		t.Errorf("unknown convention: %v", err)
	}
}
