package trainers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"time"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/param"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
	"github.com/dmlbench/dmlbench/trainers/samplers"
)

// Split is a set of input rows and their class labels.
type Split struct {
	X      mat32.Matrix
	Labels []int32
}

// EvalFunc scores embeddings of a held-out split; keys are those of
// `dmlbench eval --format json` ("R@1", "NMI", "mAP@C", ...).
type EvalFunc func(ctx context.Context, emb mat32.Matrix, labels []int32) (record.Metrics, error)

// Progress is reported after every step and evaluation.
type Progress struct {
	Epoch, Epochs int // Epoch is 1-based
	Iter, Iters   int // steps done in this epoch
	Loss          float64
	LastR1        float64 // most recent test R@1 (NaN before the first evaluation)
	Phase         string  // "train", "eval"
}

// Options are the inputs of Train besides the config.
type Options struct {
	Train, Val, Test Split // Val may be empty (no best-epoch selection)
	// Evaluate scores held-out embeddings (required; `dmlbench run` passes
	// metrics.Evaluate with the config's metrics, convention and distance).
	Evaluate EvalFunc
	// Spectrum, if set, computes the singular values of the final test embeddings.
	Spectrum func(mat32.Matrix) ([]float64, error)
	// FinalEmbeddings, if set, receives the final model's test embeddings
	// (e.g. to save them for eval, plot tsne or another clustering).
	FinalEmbeddings func(mat32.Matrix) error
	// Refine, if set, maps the final test embeddings to refined ones with
	// the trained loss (Seidenschwarz et al. 2021 §3: test-time batches through the MPN);
	// they are scored into run.FinalRefined next to the backbone-only Final.
	Refine func(ctx context.Context, emb mat32.Matrix, loss losses.Loss) (mat32.Matrix, error)
	// Checkpoint is the checkpoint path ("" = none); written atomically
	// after every epoch.
	Checkpoint string
	// Resume continues from Checkpoint, which must exist and match the config.
	Resume bool
	// OnProgress, if set, receives progress reports.
	OnProgress func(Progress)
	// OnStart, if set, is called with the run record of a fresh run once
	// the untrained model is evaluated and epoch 0 checkpointed (not on
	// resume); an error stops training.
	OnStart func(*record.Run) error
	// OnEpoch, if set, is called with the run record after every epoch
	// (e.g. to rewrite run.json); an error stops training.
	OnEpoch func(*record.Run) error
}

// ErrInterrupted is wrapped by Train's error when ctx was cancelled; the
// last checkpoint (end of the previous epoch) stays for --resume.
var ErrInterrupted = errors.New("training interrupted")

// ErrDiverged is wrapped by the error of a non-finite loss.
var ErrDiverged = errors.New("diverged; try a smaller --lr")

type trainer struct {
	cfg      Config
	opt      Options
	m        model.Model
	loss     losses.Loss
	sampler  samplers.Sampler
	adam     *Adam
	params   []*param.Param
	modelPar []*param.Param
	labels   []int // dense training labels
	sched    StepDecay
	aug      regularizers.Augmenter // embedding augmenter (DAS, mixup); nil = none
	augRng   *rand.Rand             // the augmenter's stream of the current epoch (epochRNG.augment)

	xb, emb, gradE []float32
	yb             []int
}

// Train runs cfg on opt's data and fills run (History, Initial, Final, Best,
// BestEpoch, BestVal, SelectBy, Spectrum, Timings, Status). Run metadata
// (name, dataset, method, versions, config) is the caller's. cfg is
// resolved (Config.Resolve) or a partial Go literal, which is completed by
// WithDefaults and resolved here.
//
// The stages: resume (restore the checkpoint), start (evaluate the
// untrained model, checkpoint epoch 0), one epoch at a time (train, then
// evaluate and checkpoint), finish (final metrics, refinement, spectrum,
// saved embeddings, timings).
func Train(ctx context.Context, cfg Config, opt Options, run *record.Run) error {
	cfg, err := cfg.ready()
	if err != nil {
		return err
	}
	if err := checkTrainInputs(cfg, opt); err != nil {
		return err
	}
	return trainChecked(ctx, cfg, opt, run)
}

// trainChecked is Train on a resolved config and checked inputs.
func trainChecked(ctx context.Context, cfg Config, opt Options, run *record.Run) (err error) {
	start := time.Now()
	defer func() {
		// A cancelled context surfaces as an interruption wherever it hit
		// (a step, an evaluation, a sampler refresh).
		if err != nil && ctx.Err() != nil && !errors.Is(err, ErrInterrupted) {
			run.Status = "interrupted"
			err = fmt.Errorf("%w (%v); the checkpoint of the last finished epoch is kept", ErrInterrupted, err)
		}
	}()
	t, err := newTrainer(cfg, opt)
	if err != nil {
		return err
	}
	defer t.m.Close()

	if run.Timings == nil {
		run.Timings = map[string]float64{}
	}
	run.Status = "running"
	r := &trainRun{t: t, ctx: ctx, run: run, bestVal: math.Inf(-1), lastR1: math.NaN(), testEmbEpoch: -1}
	if opt.Resume {
		if err := r.resume(); err != nil {
			return err
		}
	}
	if opt.Val.X.Rows > 0 {
		run.SelectBy = cfg.SelectBy
	}
	if err := r.begin(); err != nil {
		return err
	}
	for e := r.startEpoch; e < cfg.Epochs; e++ {
		if err := r.epoch(e); err != nil {
			return err
		}
	}
	return r.finish(start)
}

// checkTrainInputs checks Train's inputs and that a resolved config fits
// them.
func checkTrainInputs(cfg Config, opt Options) error {
	if err := checkSplits(opt); err != nil {
		return err
	}
	if cfg.BatchSize > opt.Train.X.Rows {
		// Checked before any allocation: a batch larger than the data would
		// only repeat rows, and a huge one exhausts memory.
		return &ConfigError{fmt.Errorf("batch-size %d exceeds the %d training rows; choose at most %d", cfg.BatchSize, opt.Train.X.Rows, opt.Train.X.Rows)}
	}
	if opt.Evaluate == nil {
		return fmt.Errorf("trainers: no evaluation function")
	}
	if opt.Resume && opt.Checkpoint == "" {
		return fmt.Errorf("resume: no checkpoint path")
	}
	return nil
}

// epochRNG is the bundle of random streams of one epoch, each seeded from
// (seed, epoch, purpose) by deriveSeed, so that the epoch number is the
// whole RNG state a checkpoint needs.
type epochRNG struct {
	sampler, loss, augment *rand.Rand
}

func newEpochRNG(seed int64, epoch int) epochRNG {
	src := func(purpose int) *rand.Rand { return rand.New(rand.NewSource(deriveSeed(seed, epoch, purpose))) }
	return epochRNG{sampler: src(purposeSampler), loss: src(purposeLoss), augment: src(purposeAugment)}
}

// trainRun is the state of one Train call between its stages.
type trainRun struct {
	t          *trainer
	ctx        context.Context
	run        *record.Run
	startEpoch int
	bestVal    float64 // validation score of the best epoch so far
	hasBest    bool
	lastR1     float64 // most recent test R@1 (NaN before the first)
	// The test embeddings of the latest evaluation, kept for the final
	// consumers (refinement, spectrum, saved embeddings) when that
	// evaluation was of the final model.
	testEmb      mat32.Matrix
	testEmbEpoch int
}

// resume restores the checkpoint: parameters, Adam and augmenter state,
// the history and best epoch so far.
func (r *trainRun) resume() error {
	t, run := r.t, r.run
	ck, err := loadCheckpoint(t.opt.Checkpoint)
	if err != nil {
		return err
	}
	if ck.ConfigHash != t.cfg.Hash() {
		return fmt.Errorf("resume: checkpoint %s was written for a different configuration (hash %s, now %s)", t.opt.Checkpoint, ck.ConfigHash, t.cfg.Hash())
	}
	if err := restoreParams(t.params, t.adam, ck.Params); err != nil {
		return err
	}
	if err := t.restoreAugState(ck.Augment); err != nil {
		return err
	}
	t.adam.T = ck.AdamT
	r.startEpoch = ck.Epoch
	r.bestVal, r.hasBest = ck.BestVal, ck.HasBest
	run.Initial, run.History, run.Best, run.BestEpoch, run.BestVal = ck.Run.Initial, ck.Run.History, ck.Run.Best, ck.Run.BestEpoch, ck.Run.BestVal
	for k, v := range ck.Run.Timings {
		run.Timings[k] = v
	}
	// Drop history rows past the checkpoint (a run extended later).
	if len(run.History) > r.startEpoch {
		run.History = run.History[:r.startEpoch]
	}
	return nil
}

// begin evaluates the untrained model (unless a resumed run has done so)
// and, for a fresh run, writes the epoch-0 checkpoint and calls OnStart.
func (r *trainRun) begin() error {
	run, opt := r.run, r.t.opt
	if !opt.Resume || run.Initial == nil {
		var err error
		if run.Initial, err = r.evalTest(0); err != nil {
			return err
		}
	}
	for _, h := range run.History {
		if r1, ok := h.Metrics["R@1"]; ok {
			r.lastR1 = r1
		}
	}
	if opt.Resume {
		return nil
	}
	// Epoch-0 checkpoint: an interruption during epoch 1 can resume too.
	if err := r.save(0); err != nil {
		return err
	}
	if opt.OnStart != nil {
		return opt.OnStart(run)
	}
	return nil
}

func (r *trainRun) report(p Progress) {
	if r.t.opt.OnProgress != nil {
		p.Epochs, p.LastR1 = r.t.cfg.Epochs, r.lastR1
		r.t.opt.OnProgress(p)
	}
}

// evalTest scores the test split after epoch (0 = untrained).
func (r *trainRun) evalTest(epoch int) (record.Metrics, error) {
	r.report(Progress{Epoch: epoch, Phase: "eval"})
	t0 := time.Now()
	defer func() { r.run.Timings["eval"] += time.Since(t0).Seconds() }()
	mt, emb, err := r.t.evaluate(r.ctx, r.t.opt.Test)
	if err != nil {
		return nil, fmt.Errorf("evaluate test split (epoch %d): %w", epoch, err)
	}
	r.testEmb, r.testEmbEpoch = emb, epoch
	if r1, ok := mt["R@1"]; ok {
		r.lastR1 = r1
	}
	return mt, nil
}

// save writes the checkpoint of the end of epoch (none without a path).
func (r *trainRun) save(epoch int) error {
	t, run := r.t, r.run
	if t.opt.Checkpoint == "" {
		return nil
	}
	augState, err := t.augState()
	if err != nil {
		return err
	}
	return saveCheckpoint(t.opt.Checkpoint, &checkpoint{Format: checkpointFormat, ConfigHash: t.cfg.Hash(), Epoch: epoch, AdamT: t.adam.T,
		Params: captureParams(t.params, t.adam), Augment: augState, BestVal: r.bestVal, HasBest: r.hasBest,
		Run: record.Run{Initial: run.Initial, History: run.History, Best: run.Best, BestEpoch: run.BestEpoch, BestVal: run.BestVal, Timings: run.Timings}})
}

// itersPerEpoch is the number of steps of every epoch.
func (t *trainer) itersPerEpoch() int {
	if t.cfg.ItersPerEpoch > 0 {
		return t.cfg.ItersPerEpoch
	}
	return (t.opt.Train.X.Rows + t.cfg.BatchSize - 1) / t.cfg.BatchSize
}

// epoch trains epoch e (0-based), evaluates it when due, records its row
// and checkpoints.
func (r *trainRun) epoch(e int) error {
	t, cfg, run := r.t, r.t.cfg, r.run
	t0 := time.Now()
	if es, ok := t.sampler.(samplers.EmbeddingSampler); ok {
		emb, err := model.Embed(t.m, t.opt.Train.X)
		if err != nil {
			return err
		}
		if err := es.Refresh(emb); err != nil {
			return fmt.Errorf("sampler %s: %w", t.sampler.Name(), err)
		}
	}
	rng := newEpochRNG(cfg.Seed, e)
	batches, err := t.sampler.Batches(t.opt.Train.Labels, cfg.BatchSize, t.itersPerEpoch(), rng.sampler)
	if err != nil {
		return err
	}
	t.augRng = rng.augment
	factor := t.sched.Factor(e)
	var sum float64
	for it, b := range batches {
		if err := r.ctx.Err(); err != nil {
			run.Status = "interrupted"
			return fmt.Errorf("%w in epoch %d (%v); the checkpoint of epoch %d is kept", ErrInterrupted, e+1, err, e)
		}
		l, err := t.step(b, rng.loss, factor)
		if err != nil {
			return fmt.Errorf("epoch %d step %d: %w", e+1, it+1, err)
		}
		sum += l
		r.report(Progress{Epoch: e + 1, Iter: it + 1, Iters: len(batches), Loss: sum / float64(it+1), Phase: "train"})
	}
	trainSec := time.Since(t0).Seconds()
	run.Timings["train"] += trainSec
	row := record.Epoch{Epoch: e + 1, Loss: sum / float64(max(1, len(batches))), Seconds: trainSec}
	if (cfg.EvalEvery > 0 && (e+1)%cfg.EvalEvery == 0) || e+1 == cfg.Epochs {
		if err := r.evaluateEpoch(e+1, &row); err != nil {
			return err
		}
	}
	run.History = append(run.History, row)
	if err := r.save(e + 1); err != nil {
		return err
	}
	if t.opt.OnEpoch != nil {
		return t.opt.OnEpoch(run)
	}
	return nil
}

// evaluateEpoch scores the test (and validation) split after epoch into
// row and updates the best epoch.
func (r *trainRun) evaluateEpoch(epoch int, row *record.Epoch) error {
	t, run := r.t, r.run
	var err error
	if row.Metrics, err = r.evalTest(epoch); err != nil {
		return err
	}
	if t.opt.Val.X.Rows == 0 {
		return nil
	}
	t1 := time.Now()
	if row.ValMetric, _, err = t.evaluate(r.ctx, t.opt.Val); err != nil {
		return fmt.Errorf("evaluate validation split (epoch %d): %w", epoch, err)
	}
	run.Timings["eval"] += time.Since(t1).Seconds()
	v, ok := row.ValMetric[t.cfg.SelectBy]
	if !ok {
		return fmt.Errorf("select-by metric %q is not among the evaluated metrics %v", t.cfg.SelectBy, keys(row.ValMetric))
	}
	if !r.hasBest || v > r.bestVal {
		r.bestVal, r.hasBest = v, true
		run.Best, run.BestEpoch, run.BestVal = row.Metrics, epoch, row.ValMetric
	}
	return nil
}

// finish sets the final metrics — those of the last epoch (always
// evaluated), or the initial ones for a zero-epoch run — and runs the
// final consumers: refinement, spectrum, saved embeddings.
func (r *trainRun) finish(start time.Time) error {
	t, cfg, run, opt := r.t, r.t.cfg, r.run, r.t.opt
	run.Final = run.Initial
	if n := len(run.History); n > 0 && run.History[n-1].Metrics != nil {
		run.Final = run.History[n-1].Metrics
	}
	if opt.Refine != nil || opt.Spectrum != nil || opt.FinalEmbeddings != nil {
		emb := r.testEmb
		if r.testEmbEpoch != cfg.Epochs { // e.g. resumed after the last epoch
			var err error
			if emb, err = model.Embed(t.m, opt.Test.X); err != nil {
				return err
			}
		}
		if err := r.finalConsumers(emb); err != nil {
			return err
		}
	}
	run.Timings["total"] += time.Since(start).Seconds()
	if steps := float64(cfg.Epochs * t.itersPerEpoch()); steps > 0 && run.Timings["train"] > 0 {
		run.Timings["step_mean"] = run.Timings["train"] / steps
	}
	run.Status = "done"
	return nil
}

// finalConsumers hands the final test embeddings to Refine, Spectrum and
// FinalEmbeddings.
func (r *trainRun) finalConsumers(emb mat32.Matrix) error {
	t, run, opt := r.t, r.run, r.t.opt
	var err error
	if opt.Refine != nil {
		t0 := time.Now()
		ref, err := opt.Refine(r.ctx, emb, t.loss)
		if err != nil {
			return fmt.Errorf("test-time refinement: %w", err)
		}
		if run.FinalRefined, err = opt.Evaluate(r.ctx, ref, opt.Test.Labels); err != nil {
			return fmt.Errorf("evaluate refined test embeddings: %w", err)
		}
		run.Timings["refine"] = time.Since(t0).Seconds()
	}
	if opt.Spectrum != nil {
		if run.Spectrum, err = opt.Spectrum(emb); err != nil {
			return fmt.Errorf("spectrum: %w", err)
		}
	}
	if opt.FinalEmbeddings != nil {
		if err := opt.FinalEmbeddings(emb); err != nil {
			return fmt.Errorf("final embeddings: %w", err)
		}
	}
	return nil
}

func keys(m record.Metrics) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func checkSplits(opt Options) error {
	check := func(name string, s Split, need bool) error {
		if s.X.Rows == 0 && !need {
			return nil
		}
		switch {
		case s.X.Rows == 0:
			return fmt.Errorf("%s split is empty", name)
		case len(s.X.Data) != s.X.Rows*s.X.Cols:
			return fmt.Errorf("%s split: data length %d does not match %d×%d", name, len(s.X.Data), s.X.Rows, s.X.Cols)
		case len(s.Labels) != s.X.Rows:
			return fmt.Errorf("%s split: %d labels for %d rows", name, len(s.Labels), s.X.Rows)
		case s.X.Cols != opt.Train.X.Cols:
			return fmt.Errorf("%s split has %d columns, training split %d", name, s.X.Cols, opt.Train.X.Cols)
		}
		for i, v := range s.X.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%s split: non-finite value at row %d", name, i/s.X.Cols)
			}
		}
		return nil
	}
	if err := check("training", opt.Train, true); err != nil {
		return err
	}
	if err := check("test", opt.Test, true); err != nil {
		return err
	}
	return check("validation", opt.Val, false)
}

func newTrainer(cfg Config, opt Options) (*trainer, error) {
	model.UseBLAS()
	// Dense training labels 0..C−1 in order of the sorted original ids.
	ids := map[int32]int{}
	for _, l := range opt.Train.Labels {
		ids[l] = 0
	}
	sorted := make([]int32, 0, len(ids))
	for l := range ids {
		sorted = append(sorted, l)
	}
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	for i, l := range sorted {
		ids[l] = i
	}
	labels := make([]int, len(opt.Train.Labels))
	for i, l := range opt.Train.Labels {
		labels[i] = ids[l]
	}
	if len(sorted) < 2 {
		return nil, fmt.Errorf("training split has %d class(es); metric learning needs at least 2", len(sorted))
	}
	m, err := model.New(cfg.ModelConfig(opt.Train.X.Cols))
	if err != nil {
		return nil, err
	}
	loss, err := losses.New(cfg.Loss, losses.Config{NumClasses: len(sorted), Dim: cfg.EmbedDim, Miner: cfg.Miner,
		Hyper: cfg.Hyper, Seed: deriveSeed(cfg.Seed, 0, purposeLossInit)})
	if err != nil {
		m.Close()
		return nil, err
	}
	s, err := samplers.New(cfg.Sampler)
	if err != nil {
		m.Close()
		return nil, err
	}
	if err := setRegularizers(cfg, loss); err != nil {
		m.Close()
		return nil, err
	}
	aug, err := newAugmenter(cfg, len(sorted))
	if err != nil {
		m.Close()
		return nil, err
	}
	t := &trainer{cfg: cfg, opt: opt, m: m, loss: loss, sampler: s, labels: labels,
		sched: StepDecay{Steps: cfg.LRSteps, Gamma: cfg.LRGamma}, aug: aug}
	t.modelPar = m.Params()
	t.params = append(append([]*param.Param(nil), t.modelPar...), loss.Params()...)
	for _, p := range t.params {
		if len(p.Data) != len(p.Grad) {
			m.Close()
			return nil, fmt.Errorf("parameter %s: %d values but %d gradients", p.Name, len(p.Data), len(p.Grad))
		}
	}
	t.adam = NewAdam(t.params, cfg.WeightDecay)
	if err := t.setTeacher(); err != nil {
		m.Close()
		return nil, err
	}
	B, D := cfg.BatchSize, cfg.EmbedDim
	t.xb = make([]float32, B*m.InDim())
	t.emb = make([]float32, B*D)
	t.gradE = make([]float32, B*D)
	t.yb = make([]int, B)
	return t, nil
}

// step trains on the batch idx and returns its loss.
func (t *trainer) step(idx []int, rng *rand.Rand, factor float64) (float64, error) {
	B := len(idx)
	if B != t.cfg.BatchSize {
		return 0, fmt.Errorf("sampler returned a batch of %d, want %d", B, t.cfg.BatchSize)
	}
	if d, ok := t.loss.(losses.Distiller); ok {
		d.SetRows(idx) // the teacher's targets are per training row
	}
	X := t.opt.Train.X
	in, D, c := t.m.InDim(), t.m.OutDim(), t.m.Chunk()
	for j, i := range idx {
		if i < 0 || i >= X.Rows {
			return 0, fmt.Errorf("sampler returned index %d outside [0, %d)", i, X.Rows)
		}
		copy(t.xb[j*in:(j+1)*in], X.Row(i))
		t.yb[j] = t.labels[i]
	}
	// 1. embeddings, chunk by chunk (a batch of one chunk keeps its
	// activations for step 3)
	for s := 0; s < B; s += c {
		n := min(c, B-s)
		if err := t.m.Forward(t.xb[s*in:(s+n)*in], n, t.emb[s*D:(s+n)*D]); err != nil {
			return 0, err
		}
	}
	// 2. loss and dL/dE outside the graph
	clear(t.gradE)
	batch := losses.Batch{Emb: t.emb, Labels: t.yb, B: B, D: D, Rng: rng}
	var l float64
	var err error
	if t.aug != nil {
		// augmented views, then dL/dE through the augmenter's Jacobian
		l, err = regularizers.Apply(t.loss, t.aug, batch, t.augRng, t.gradE)
	} else {
		l, err = t.loss.Forward(batch, t.gradE)
	}
	if err != nil {
		return 0, fmt.Errorf("loss %s: %w", t.loss.Name(), err)
	}
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return 0, fmt.Errorf("loss %s is %v (%w)", t.loss.Name(), l, ErrDiverged)
	}
	// 3. surrogate back-propagation Σ E⊙G: through the kept activations,
	// or re-forwarding chunk by chunk and accumulating (multistage)
	for _, p := range t.modelPar {
		clear(p.Grad)
	}
	if B <= c {
		if err := t.m.BackwardKept(t.gradE, B); err != nil {
			return 0, err
		}
		return l, t.adam.Step(t.cfg.LR, factor)
	}
	for s := 0; s < B; s += c {
		n := min(c, B-s)
		if err := t.m.Backward(t.xb[s*in:(s+n)*in], t.gradE[s*D:(s+n)*D], n); err != nil {
			return 0, err
		}
	}
	// 4. Adam
	return l, t.adam.Step(t.cfg.LR, factor)
}

// evaluate embeds s with the current model and scores it; it also returns
// the embeddings.
func (t *trainer) evaluate(ctx context.Context, s Split) (record.Metrics, mat32.Matrix, error) {
	emb, err := model.Embed(t.m, s.X)
	if err != nil {
		return nil, mat32.Matrix{}, err
	}
	m, err := t.opt.Evaluate(ctx, emb, s.Labels)
	return m, emb, err
}

// RemoveCheckpoint deletes a finished run's checkpoint (ignoring absence).
func RemoveCheckpoint(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
