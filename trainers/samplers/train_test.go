package samplers_test

import (
	"context"
	"math/rand"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/internal/testutil"
	"github.com/dmlbench/dmlbench/trainers/samplers"
)

// synth is testutil.Synth (class signal in the first `signal` inputs, larger
// noise in the others) as a trainers.Split.
func synth(rng *rand.Rand, classes, per, dim, signal int, first int32) trainers.Split {
	x, y := testutil.Synth(rng, classes, per, dim, signal, first)
	return trainers.Split{X: x, Labels: y}
}

// Training through the trainer (which embeds the training set before every
// epoch for these samplers) raises held-out R@1 above the untrained model.
func TestEmbeddingSamplersTrain(t *testing.T) {
	for _, name := range []string{"ddm", "frd", "gc", "gc-d2"} {
		rng := rand.New(rand.NewSource(123))
		opt := trainers.Options{Train: synth(rng, 12, 10, 16, 4, 0), Test: synth(rng, 10, 10, 16, 4, 200), Evaluate: testutil.R1}
		cfg := trainers.Config{Loss: "contrastive", Miner: "random", Sampler: name, Epochs: 6, BatchSize: 24, ItersPerEpoch: 6,
			LR: 1e-2, Hidden: []int{32}, EmbedDim: 8, Seed: 7}
		run := &record.Run{}
		if err := trainers.Train(context.Background(), cfg, opt, run); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a, b := run.Initial["R@1"], run.Final["R@1"]
		t.Logf("%s: test R@1 %.3f → %.3f", name, a, b)
		if b < a+0.1 {
			t.Fatalf("%s: training did not help: R@1 %.3f → %.3f", name, a, b)
		}
	}
}

// spy records the embeddings the trainer refreshes it with.
type spy struct {
	samplers.SPC
	got []mat32.Matrix
}

func (s *spy) Refresh(emb mat32.Matrix) error {
	s.got = append(s.got, mat32.Matrix{Rows: emb.Rows, Cols: emb.Cols, Data: append([]float32(nil), emb.Data...)})
	return nil
}

var theSpy = &spy{SPC: samplers.SPC{K: 4}}

func init() {
	samplers.Register(samplers.Info{Name: "spytest-embed", Summary: "test only", New: func() samplers.Sampler { return theSpy }})
}

// The trainer embeds the whole training set once per epoch, before the
// epoch's batches, and only for embedding-aware samplers.
func TestTrainerRefreshesEveryEpoch(t *testing.T) {
	theSpy.got = nil // other tests may have refreshed the shared instance
	rng := rand.New(rand.NewSource(1))
	opt := trainers.Options{Train: synth(rng, 6, 8, 16, 4, 0), Test: synth(rng, 4, 8, 16, 4, 100), Evaluate: testutil.R1}
	cfg := trainers.Config{Loss: "contrastive", Miner: "random", Sampler: "spytest-embed", Epochs: 3, BatchSize: 16, ItersPerEpoch: 3,
		LR: 1e-2, Hidden: []int{32}, EmbedDim: 8, Seed: 1}
	if err := trainers.Train(context.Background(), cfg, opt, &record.Run{}); err != nil {
		t.Fatal(err)
	}
	if len(theSpy.got) != 3 {
		t.Fatalf("%d refreshes in 3 epochs", len(theSpy.got))
	}
	for e, m := range theSpy.got {
		if m.Rows != 48 || m.Cols != 8 {
			t.Fatalf("epoch %d: embeddings %d×%d", e+1, m.Rows, m.Cols)
		}
		if e > 0 && reflect.DeepEqual(m.Data, theSpy.got[e-1].Data) {
			t.Fatalf("epoch %d: embeddings not recomputed after training", e+1)
		}
	}
}
