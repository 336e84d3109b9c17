package regularizers_test

import (
	"context"
	"math/rand"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/internal/testutil"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// synth is testutil.Synth (class signal in the first `signal` inputs, larger
// noise in the others) as a trainers.Split.
func synth(rng *rand.Rand, classes, per, dim, signal int, first int32) trainers.Split {
	x, y := testutil.Synth(rng, classes, per, dim, signal, first)
	return trainers.Split{X: x, Labels: y}
}

func data() trainers.Options {
	rng := rand.New(rand.NewSource(123))
	return trainers.Options{
		Train:    synth(rng, 12, 10, 16, 4, 0),
		Test:     synth(rng, 10, 10, 16, 4, 200),
		Evaluate: testutil.R1,
	}
}

func config(loss string) trainers.Config {
	return trainers.Config{Loss: loss, Sampler: "spc-4", Epochs: 6, BatchSize: 24, ItersPerEpoch: 6,
		LR: 1e-2, Hidden: []int{32}, EmbedDim: 8, Seed: 7}
}

// TestRegularisedTrainingImprovesHeldOutRecall trains each regulariser on
// synthetic open-set data: held-out R@1 must rise clearly above the
// untrained model's.
func TestRegularisedTrainingImprovesHeldOutRecall(t *testing.T) {
	das := regularizers.DefaultDASParams()
	cases := []struct {
		name string
		edit func(*trainers.Config)
	}{
		{"R-margin", func(c *trainers.Config) { c.RhoReg = regularizers.DefaultRhoP }},
		{"R-triplet", func(c *trainers.Config) { c.Loss, c.RhoReg = "triplet", 0.3 }},
		{"R-contrastive", func(c *trainers.Config) { c.Loss, c.RhoReg = "contrastive", 0.2 }},
		{"DAS-margin", func(c *trainers.Config) { c.DAS, c.DASParams = true, &das }},
		{"mixup-margin", func(c *trainers.Config) { c.Mixup = true }},
		{"RS@k-SiMix", func(c *trainers.Config) { c.Loss, c.Hyper = "recallk", map[string]float64{"simix": 1} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config("margin")
			tc.edit(&cfg)
			run := &record.Run{}
			if err := trainers.Train(context.Background(), cfg, data(), run); err != nil {
				t.Fatal(err)
			}
			r0, r1 := run.Initial["R@1"], run.Final["R@1"]
			t.Logf("%s: held-out R@1 %.3f → %.3f", tc.name, r0, r1)
			if r1 < r0+0.1 {
				t.Fatalf("%s did not learn: R@1 %.3f → %.3f", tc.name, r0, r1)
			}
		})
	}
}

// TestRhoRejectedForNonTupleLoss: --rho-reg with a loss without tuples is a
// clear error, not a silent no-op.
func TestRhoRejectedForNonTupleLoss(t *testing.T) {
	cfg := config("multisimilarity")
	cfg.RhoReg = 0.2
	err := trainers.Train(context.Background(), cfg, data(), &record.Run{})
	if err == nil {
		t.Fatal("rho-reg accepted for multisimilarity")
	}
	t.Log(err)
}

func strip(r *record.Run) *record.Run {
	c := *r
	c.Timings = nil
	c.History = append([]record.Epoch(nil), r.History...)
	for i := range c.History {
		c.History[i].Seconds = 0
	}
	return &c
}

// TestDASDeterministicAndResumable: same seed → same numbers, and a run
// interrupted after epoch 2 and resumed from its checkpoint (which holds
// DAS's recorder and banks) equals the uninterrupted run.
func TestDASDeterministicAndResumable(t *testing.T) {
	for _, reg := range []string{"das", "mixup+rho"} {
		t.Run(reg, func(t *testing.T) {
			cfg := config("margin")
			cfg.Epochs = 4
			if reg == "das" {
				cfg.DAS = true
			} else {
				cfg.Mixup, cfg.RhoReg = true, 0.2
			}
			dir := t.TempDir()
			opt := data()
			opt.Checkpoint = filepath.Join(dir, "a.ckpt")
			full := &record.Run{}
			if err := trainers.Train(context.Background(), cfg, opt, full); err != nil {
				t.Fatal(err)
			}
			again := &record.Run{}
			if err := trainers.Train(context.Background(), cfg, data(), again); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(strip(full).History, strip(again).History) {
				t.Fatal("same seed, different numbers")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opt.Checkpoint = filepath.Join(dir, "b.ckpt")
			opt.OnEpoch = func(r *record.Run) error {
				if len(r.History) == 2 {
					cancel()
				}
				return nil
			}
			part := &record.Run{}
			if err := trainers.Train(ctx, cfg, opt, part); err == nil {
				t.Fatal("cancelled run did not stop")
			}
			opt.OnEpoch, opt.Resume = nil, true
			if err := trainers.Train(context.Background(), cfg, opt, part); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(strip(full).History, strip(part).History) || !reflect.DeepEqual(full.Final, part.Final) {
				t.Fatalf("resumed run differs:\n%+v\n%+v", strip(full).History, strip(part).History)
			}
		})
	}
}
