package losses

import (
	"testing"
	"time"
)

// TestMoreLossesTrain trains each added loss for 250 plain gradient steps on
// the synthetic open-set task of train_test.go (batches of 8 classes × 4)
// and requires held-out R@1 to rise by at least 0.3 over the untrained
// embedding (≈ 0.38 → ≥ 0.8 for every loss here; learning rates picked by a
// sweep over 0.003–0.3: the largest that trains stably for the raw-embedding
// losses, which diverge at 0.3).
func TestMoreLossesTrain(t *testing.T) {
	cases := []struct {
		name string
		lr   float64
	}{
		{"angular", 0.01},
		{"genlifted", 0.01},
		{"histogram", 0.1},
		{"quadruplet", 0.1},
		{"snr", 0.1},
		{"softtriple", 0.1},
		{"lifted", 0.01},
		{"proxytriplet", 0.3},
		{"prototypical", 0.01},
		{"rankedlist", 0.1},
		{"structclust", 0.03},
		{"recallk", 0.1},
		{"smoothap", 0.1},
	}
	const steps = 250
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			before, after := trainRecall(t, tc.name, tc.lr, steps)
			t.Logf("%s: held-out R@1 %.3f → %.3f after %d steps (%v)", tc.name, before, after, steps, time.Since(start).Round(time.Millisecond))
			if after < before+0.3 {
				t.Errorf("%s did not train: R@1 %.3f → %.3f", tc.name, before, after)
			}
		})
	}
}
