package trainers

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers/internal/testutil"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/param"
)

// testLoss is a contrastive loss (Hadsell et al. 2006) over all pairs of the
// batch, with its gradient written by hand:
//
//	L = 1/|P| Σ_{i<j} [y_i=y_j] d_ij² + [y_i≠y_j] max(0, m − d_ij)²,  m = 1.
type testLoss struct{}

func (testLoss) Name() string           { return "enginetest-contrastive" }
func (testLoss) Params() []*param.Param { return nil }
func (testLoss) Forward(b losses.Batch, grad []float32) (float64, error) {
	const margin = 1.0
	var sum float64
	pairs := 0
	g := make([]float64, b.B*b.D)
	for i := 0; i < b.B; i++ {
		for j := i + 1; j < b.B; j++ {
			pairs++
			ei, ej := b.Emb[i*b.D:(i+1)*b.D], b.Emb[j*b.D:(j+1)*b.D]
			var d2 float64
			for t := range ei {
				d := float64(ei[t] - ej[t])
				d2 += d * d
			}
			d := math.Sqrt(d2)
			var coef float64 // dL/d(e_i) = coef·(e_i − e_j)
			if b.Labels[i] == b.Labels[j] {
				sum += d2
				coef = 2
			} else if d < margin {
				sum += (margin - d) * (margin - d)
				if d > 1e-12 {
					coef = -2 * (margin - d) / d
				}
			}
			for t := range ei {
				v := coef * float64(ei[t]-ej[t])
				g[i*b.D+t] += v
				g[j*b.D+t] -= v
			}
		}
	}
	for k := range g {
		grad[k] = float32(g[k] / float64(pairs))
	}
	return sum / float64(pairs), nil
}

func init() {
	losses.Register(losses.Info{Name: "enginetest-contrastive", Summary: "test-only contrastive loss",
		Hyper: map[string]float64{}, New: func(losses.Config) (losses.Loss, error) { return testLoss{}, nil }})
}

// synth is testutil.Synth (class signal in the first `signal` inputs, larger
// noise in the others) as a Split.
func synth(rng *rand.Rand, classes, per, dim, signal int, firstLabel int32) Split {
	x, y := testutil.Synth(rng, classes, per, dim, signal, firstLabel)
	return Split{X: x, Labels: y}
}

func testData() Options {
	rng := rand.New(rand.NewSource(123))
	return Options{
		Train:    synth(rng, 12, 10, 16, 4, 0),
		Val:      synth(rng, 6, 10, 16, 4, 100),
		Test:     synth(rng, 10, 10, 16, 4, 200),
		Evaluate: testutil.R1,
	}
}

func testConfig() Config {
	return Config{Loss: "enginetest-contrastive", Sampler: "spc-4", Epochs: 6, BatchSize: 24, ItersPerEpoch: 6,
		LR: 1e-2, Hidden: []int{32}, EmbedDim: 8, Seed: 7}
}

func train(t *testing.T, cfg Config, opt Options) *record.Run {
	t.Helper()
	run := &record.Run{}
	if err := Train(context.Background(), cfg, opt, run); err != nil {
		t.Fatal(err)
	}
	return run
}

func TestTrainImprovesHeldOutRecall(t *testing.T) {
	opt := testData()
	opt.Val = Split{}
	run := train(t, testConfig(), opt)
	if run.Status != "done" || len(run.History) != 6 {
		t.Fatalf("status %s, %d epochs", run.Status, len(run.History))
	}
	r0, r1 := run.Initial["R@1"], run.Final["R@1"]
	t.Logf("test R@1: untrained %.3f, trained %.3f; loss %.4f → %.4f", r0, r1, run.History[0].Loss, run.History[5].Loss)
	if r1 < r0+0.15 {
		t.Fatalf("training did not help: R@1 %.3f → %.3f", r0, r1)
	}
	if run.History[5].Loss >= run.History[0].Loss {
		t.Fatalf("loss did not fall: %v → %v", run.History[0].Loss, run.History[5].Loss)
	}
	if run.Best != nil || run.BestEpoch != 0 {
		t.Fatal("best epoch chosen without a validation split")
	}
}

func TestSameSeedSameNumbers(t *testing.T) {
	cfg := testConfig()
	cfg.Epochs = 3
	a := train(t, cfg, testData())
	b := train(t, cfg, testData())
	strip := func(r *record.Run) *record.Run {
		c := *r
		c.Timings = nil
		c.History = append([]record.Epoch(nil), r.History...)
		for i := range c.History {
			c.History[i].Seconds = 0
		}
		return &c
	}
	if !reflect.DeepEqual(strip(a), strip(b)) {
		t.Fatalf("same seed, different runs:\n%+v\n%+v", strip(a), strip(b))
	}
	cfg.Seed++
	c := train(t, cfg, testData())
	if c.History[0].Loss == a.History[0].Loss {
		t.Fatal("different seeds gave the same first-epoch loss")
	}
}

func TestResumeReproducesUninterruptedRun(t *testing.T) {
	cfg := testConfig()
	cfg.Epochs = 4
	cfg.LRSteps = []int{2}
	dir := t.TempDir()
	full := &record.Run{}
	opt := testData()
	opt.Checkpoint = filepath.Join(dir, "a.ckpt")
	if err := Train(context.Background(), cfg, opt, full); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt.Checkpoint = filepath.Join(dir, "b.ckpt")
	opt.OnEpoch = func(r *record.Run) error {
		if len(r.History) == 2 {
			cancel() // Ctrl-C after epoch 2
		}
		return nil
	}
	part := &record.Run{}
	err := Train(ctx, cfg, opt, part)
	if !errors.Is(err, ErrInterrupted) || part.Status != "interrupted" {
		t.Fatalf("want interruption, got %v (status %s)", err, part.Status)
	}
	opt.OnEpoch, opt.Resume = nil, true
	resumed := &record.Run{}
	if err := Train(context.Background(), cfg, opt, resumed); err != nil {
		t.Fatal(err)
	}
	if len(resumed.History) != 4 {
		t.Fatalf("resumed run has %d epochs", len(resumed.History))
	}
	for i := range full.History {
		a, b := full.History[i], resumed.History[i]
		if a.Loss != b.Loss || !reflect.DeepEqual(a.Metrics, b.Metrics) || !reflect.DeepEqual(a.ValMetric, b.ValMetric) {
			t.Fatalf("epoch %d differs: uninterrupted %+v, resumed %+v", i+1, a, b)
		}
	}
	if !reflect.DeepEqual(full.Final, resumed.Final) || !reflect.DeepEqual(full.Best, resumed.Best) || full.BestEpoch != resumed.BestEpoch || !reflect.DeepEqual(full.Initial, resumed.Initial) {
		t.Fatal("final/best/initial metrics differ after resume")
	}
	// A changed training config must not resume from this checkpoint.
	cfg.LR *= 2
	if err := Train(context.Background(), cfg, opt, &record.Run{}); err == nil {
		t.Fatal("resumed under a different config")
	}
	if err := Train(context.Background(), testConfig(), Options{Train: opt.Train, Test: opt.Test, Evaluate: testutil.R1, Resume: true, Checkpoint: filepath.Join(dir, "missing")}, &record.Run{}); err == nil {
		t.Fatal("resumed from a missing checkpoint")
	}
}

func TestValidationSelectsBestEpoch(t *testing.T) {
	cfg := testConfig()
	cfg.Epochs = 4
	run := train(t, cfg, testData())
	if run.SelectBy != "R@1" || run.BestEpoch < 1 {
		t.Fatalf("no best epoch: %+v", run)
	}
	best := math.Inf(-1)
	arg := 0
	for _, h := range run.History {
		if h.ValMetric == nil || h.Metrics == nil {
			t.Fatalf("epoch %d not evaluated", h.Epoch)
		}
		if v := h.ValMetric["R@1"]; v > best {
			best, arg = v, h.Epoch
		}
	}
	if arg != run.BestEpoch || !reflect.DeepEqual(run.Best, run.History[arg-1].Metrics) || !reflect.DeepEqual(run.BestVal, run.History[arg-1].ValMetric) {
		t.Fatalf("best epoch %d, validation argmax %d", run.BestEpoch, arg)
	}
}

func TestEvalEveryAndSpectrum(t *testing.T) {
	cfg := testConfig()
	cfg.Epochs, cfg.EvalEvery = 3, 2
	opt := testData()
	opt.Val = Split{}
	var got mat32.Matrix
	opt.Spectrum = func(m mat32.Matrix) ([]float64, error) { got = m; return []float64{3, 2, 1}, nil }
	run := train(t, cfg, opt)
	if run.History[0].Metrics != nil || run.History[1].Metrics == nil || run.History[2].Metrics == nil {
		t.Fatal("eval-every 2 with 3 epochs must evaluate epochs 2 and 3 (the last)")
	}
	if got.Rows != opt.Test.X.Rows || got.Cols != 8 || len(run.Spectrum) != 3 {
		t.Fatalf("spectrum saw %d×%d", got.Rows, got.Cols)
	}
	if !reflect.DeepEqual(run.Final, run.History[2].Metrics) {
		t.Fatal("final metrics are not the last epoch's")
	}
}

func TestChunkedTrainingMatchesWholeBatch(t *testing.T) {
	cfg := testConfig()
	cfg.Epochs = 2
	opt := testData()
	opt.Val = Split{}
	a := train(t, cfg, opt)
	cfg.Chunk = 7 // multistage back-propagation in 4 chunks (last one padded)
	b := train(t, cfg, opt)
	for i := range a.History {
		if d := math.Abs(a.History[i].Loss - b.History[i].Loss); d > 1e-3*a.History[i].Loss {
			t.Fatalf("epoch %d loss: whole batch %v, chunked %v", i+1, a.History[i].Loss, b.History[i].Loss)
		}
	}
}

func TestBadInputs(t *testing.T) {
	opt := testData()
	cases := map[string]func(*Config, *Options){
		"no loss":        func(c *Config, o *Options) { c.Loss = "" },
		"unknown loss":   func(c *Config, o *Options) { c.Loss = "nope" },
		"unknown samp":   func(c *Config, o *Options) { c.Sampler = "nope" },
		"batch 1":        func(c *Config, o *Options) { c.BatchSize = 1 },
		"neg lr":         func(c *Config, o *Options) { c.LR = -1 },
		"val split 1":    func(c *Config, o *Options) { c.ValSplit = 1 },
		"embed norm":     func(c *Config, o *Options) { c.EmbedNorm = "l1" },
		"norm":           func(c *Config, o *Options) { c.Norm = "batch" },
		"width":          func(c *Config, o *Options) { o.Test.X.Cols = 3 },
		"labels":         func(c *Config, o *Options) { o.Train.Labels = o.Train.Labels[1:] },
		"no eval":        func(c *Config, o *Options) { o.Evaluate = nil },
		"one class":      func(c *Config, o *Options) { o.Train.Labels = make([]int32, o.Train.X.Rows) },
		"empty test":     func(c *Config, o *Options) { o.Test = Split{} },
		"resume no path": func(c *Config, o *Options) { o.Resume = true },
		"nan input": func(c *Config, o *Options) {
			o.Train.X.Data = append([]float32(nil), o.Train.X.Data...)
			o.Train.X.Data[5] = float32(math.NaN())
		},
	}
	for name, f := range cases {
		c, o := testConfig(), opt
		f(&c, &o)
		if o.Test.X.Cols == 3 {
			o.Test.X.Data = o.Test.X.Data[:o.Test.X.Rows*3]
		}
		if err := Train(context.Background(), c, o, &record.Run{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestConfigFileAndHash(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.yaml")
	os.WriteFile(p, []byte("dataset: omniglot\nloss: margin\nminer: distance\nbatch-size: 64\nhidden: [256, 128]\nlr-steps: [10]\nhyper:\n  beta: 1.2\n"), 0o644)
	c, given, err := LoadConfigFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Loss != "margin" || c.BatchSize != 64 || !reflect.DeepEqual(c.Hidden, []int{256, 128}) || c.Hyper["beta"] != 1.2 || c.LRSteps[0] != 10 {
		t.Fatalf("parsed %+v", c)
	}
	if !given["batch-size"] || !given["hyper"] || given["lr"] || len(given) != 7 {
		t.Fatalf("given keys %v", given)
	}
	os.WriteFile(p, []byte("loss: margin\nbatchsize: 64\n"), 0o644)
	if _, _, err := LoadConfigFile(p); err == nil {
		t.Fatal("unknown key accepted")
	}
	a := c.WithDefaults()
	b := a
	b.Epochs, b.EvalEvery = 99, 5
	if a.Hash() != b.Hash() {
		t.Fatal("epochs/eval-every changed the training hash")
	}
	b.LR = 1
	if a.Hash() == b.Hash() {
		t.Fatal("lr did not change the training hash")
	}
	if deriveSeed(1, 2, purposeLoss) == deriveSeed(1, 3, purposeLoss) || deriveSeed(1, 2, purposeLoss) == deriveSeed(1, 2, purposeSampler) {
		t.Fatal("derived seeds collide")
	}
}

// Losses on raw embeddings default to no L2 projection; an explicit
// --embed-norm wins.
func TestEmbedNormDefaultFollowsLoss(t *testing.T) {
	for loss, want := range map[string]string{"npair": "none", "lifted": "none", "genlifted": "none", "prototypical": "none", "margin": "l2", "multisimilarity": "l2"} {
		if got := (Config{Loss: loss}).WithDefaults().EmbedNorm; got != want {
			t.Errorf("%s: embed-norm %q, want %q", loss, got, want)
		}
	}
	if got := (Config{Loss: "npair", EmbedNorm: "l2"}).WithDefaults().EmbedNorm; got != "l2" {
		t.Errorf("explicit l2 overridden: %q", got)
	}
}
