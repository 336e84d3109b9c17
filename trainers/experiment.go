package trainers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/spectra"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/testtime"
)

// RunFile is the run record's name inside a run directory.
const RunFile = "run.json"

// ConfigError is a configuration that cannot run: an invalid setting, or
// one that does not fit the data (an architecture, a batch larger than the
// training split). The command line reports it as a usage error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ExperimentOptions are the inputs of RunExperiment that are not settings
// of the experiment: whether to continue an earlier run, what to record as
// the program's version, and where progress and log lines go.
type ExperimentOptions struct {
	// Resume continues from DIR/checkpoint.gob; cfg must then be the
	// recorded configuration (changes of hashed settings are refused).
	Resume bool
	// Version and Versions are recorded in run.json (the program and its
	// numerical dependencies).
	Version  string
	Versions map[string]string
	// Progress, if set, receives progress reports (see Progress).
	Progress func(Progress)
	// OnEpoch, if set, receives the run record after each epoch's
	// run.json is written (the epoch is the last History row).
	OnEpoch func(*record.Run)
	// Logf, if set, receives diagnostics that are not errors (the stack
	// of a recovered panic).
	Logf func(format string, args ...any)
	// Lock, if set, is the caller's held lock of the run directory
	// (LockRunDir), taken before it read the directory (--resume reads the
	// recorded configuration under the lock); RunExperiment then does not
	// lock again and leaves releasing it to the caller.
	Lock *RunLock
	// Backend, if set, is cfg.Backend resolved by the caller
	// (metrics.OpenBackend with cfg's convention); nil: RunExperiment
	// resolves it.
	Backend *metrics.Backend
	// Method holds further method keys for run.json (the axes of a suite's
	// grid point: embed_dim, batch_size, regularizer, …), written with the
	// run's first record so no later step has to add them. Keys the trainer
	// sets itself (loss, miner, sampler, arch, regulariser settings) win.
	Method map[string]string
}

// RunExperiment runs one experiment of `dmlbench run` in run directory dir:
// it locks dir against a second writer (LockRunDir, unless eo.Lock is
// held), loads the data set (with the validation split of cfg.ValSplit),
// builds the evaluator (metrics.Evaluate with the config's metrics,
// convention, distance and backend; undefined metrics are left out of
// run.json), trains (Train), and keeps dir/run.json up to date after every
// epoch. It returns the final record. cfg is resolved (Config.Resolve), as
// the command line's is, or a partial Go literal that WithDefaults
// completes; it is not defaulted or validated again.
//
// What a kill at any moment leaves, and why every state can be continued
// (docs/recovery.md): a fresh run writes run.json (status "running", the
// configuration and method) before its first checkpoint, so a checkpoint
// never exists without the record that says how to continue it; after
// that, run.json is only ever replaced, atomically, by a newer and
// complete state: after every epoch's checkpoint and at the end. A
// resumed run writes only once it has finished an epoch or the run (so a
// resume that fails or is killed early leaves the earlier record as it
// was), and a failure or interruption is recorded only over a state this
// call wrote. Temporary files of writers killed before their rename
// (.tmp-*) are removed once the lock is held. A fresh run that fails
// before writing anything leaves no directory behind (none of its own
// making) and no lock file.
// A panic inside training is recovered into an error (the checkpoint of the
// last finished epoch stays).
func RunExperiment(ctx context.Context, cfg Config, dir string, eo ExperimentOptions) (run *record.Run, err error) {
	if cfg, err = cfg.ready(); err != nil {
		return nil, err
	}
	x, err := openRunDir(dir, eo)
	if err != nil {
		return nil, err
	}
	defer x.close(&err)
	opt, err := experimentInputs(&cfg, dir, eo.Backend)
	if err != nil {
		return nil, err
	}
	x.hook(&opt)
	x.run = newRecord(cfg, dir, eo)
	if opt.Refine != nil {
		x.run.Method["test_time"] = testTimeOptions(cfg).String()
	}
	if err := checkTrainInputs(cfg, opt); err != nil {
		return nil, err
	}
	if !eo.Resume {
		// The record (configuration, method, status "running") goes first,
		// once the settings are known to fit the data: every checkpoint then
		// has a run.json beside it that says how to continue it.
		if err := x.write(x.run); err != nil {
			return nil, err
		}
	}
	return x.run, x.train(ctx, cfg, opt)
}

// experiment is the run directory of one RunExperiment call and what the
// call has written there.
type experiment struct {
	dir, runPath, ckPath string
	eo                   ExperimentOptions
	madeDir              bool     // the call made dir
	lock                 *RunLock // the call's own lock (nil when eo.Lock is held)
	written              bool     // run.json was written by this call
	run                  *record.Run
}

// openRunDir makes and locks dir (unless eo.Lock is held), removes the
// temporary files of killed writers, and checks that dir can start a fresh
// run or holds one to resume. On error, dir is left as it was found.
func openRunDir(dir string, eo ExperimentOptions) (*experiment, error) {
	x := &experiment{dir: dir, runPath: filepath.Join(dir, RunFile), ckPath: filepath.Join(dir, CheckpointFile), eo: eo}
	if eo.Resume {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("resume: %s is not a run directory", dir)
		}
	}
	_, statErr := os.Stat(dir)
	x.madeDir = errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock := eo.Lock
	if lock == nil {
		var err error
		if lock, err = LockRunDir(dir); err != nil {
			if x.madeDir {
				os.Remove(dir)
			}
			return nil, err
		}
		x.lock = lock
	}
	if lock.Unsupported != nil && eo.Logf != nil {
		eo.Logf("warning: %v", lock.Unsupported)
	}
	_, _ = atomicfile.CleanTemps(dir, 0)
	var err error
	if !eo.Resume {
		err = checkFreshDir(dir, x.runPath, x.ckPath)
	} else if _, serr := os.Stat(x.ckPath); serr != nil {
		err = fmt.Errorf("resume: %s holds no checkpoint (%s) to continue", dir, CheckpointFile)
	}
	if err != nil {
		x.close(&err)
		return nil, err
	}
	return x, nil
}

// close ends the call's hold on dir: a fresh run that fails before its
// first record leaves the directory as it found it (no lock file, no
// directory it made), and the call's own lock is released.
func (x *experiment) close(err *error) {
	if !x.eo.Resume && !x.written && *err != nil {
		removeLockOnly(x.dir, x.madeDir)
	}
	if x.lock != nil {
		x.lock.Release()
	}
}

// write replaces run.json with r.
func (x *experiment) write(r *record.Run) error {
	if err := record.WriteAtomic(x.runPath, r); err != nil {
		return err
	}
	x.written = true
	return nil
}

// hook sets the checkpoint and the run.json writers of opt.
func (x *experiment) hook(opt *Options) {
	opt.Checkpoint, opt.Resume, opt.OnProgress = x.ckPath, x.eo.Resume, x.eo.Progress
	opt.OnStart = x.write
	opt.OnEpoch = func(r *record.Run) error {
		if err := x.write(r); err != nil {
			return err
		}
		if x.eo.OnEpoch != nil {
			x.eo.OnEpoch(r)
		}
		return nil
	}
}

// train runs Train's stages on checked inputs, recovers a panic into an
// error, and records the outcome. A failure is recorded only over a state
// this call wrote itself: a resume failing before its first epoch (a bad
// or foreign checkpoint, an interruption) leaves the earlier run.json, and
// a fresh run that fails before its first record leaves none.
func (x *experiment) train(ctx context.Context, cfg Config, opt Options) (err error) {
	run := x.run
	defer func() {
		if p := recover(); p != nil {
			if x.eo.Logf != nil {
				x.eo.Logf("internal error: %v\n%s", p, debug.Stack())
			}
			err = fmt.Errorf("internal error: %v (the checkpoint of the last finished epoch is kept)", p)
			run.Status = "failed"
			if x.written {
				err = errors.Join(err, record.WriteAtomic(x.runPath, run))
			}
		}
	}()
	terr := trainChecked(ctx, cfg, opt, run)
	if terr == nil {
		return x.write(run)
	}
	if run.Status != "interrupted" {
		run.Status = "failed"
	}
	if x.written {
		if werr := record.WriteAtomic(x.runPath, run); werr != nil {
			return errors.Join(terr, werr)
		}
	}
	return terr
}

// removeLockOnly removes dir's lock file when it is all dir holds, and dir
// itself when the caller made it and it is then empty.
func removeLockOnly(dir string, madeDir bool) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || ents[0].Name() != LockFile {
		return
	}
	if os.Remove(filepath.Join(dir, LockFile)) == nil && madeDir {
		os.Remove(dir)
	}
}

// checkFreshDir refuses to start a new run over an earlier one's checkpoint
// or finished record.
func checkFreshDir(dir, runPath, ckPath string) error {
	if _, err := os.Stat(ckPath); err == nil {
		return fmt.Errorf("%s already holds a checkpoint: continue it with --resume or choose another --out", dir)
	}
	if r, err := record.Read(runPath); err == nil && r.Status == "done" {
		return fmt.Errorf("%s already holds a finished run (run.json): choose another --out", dir)
	}
	return nil
}

// experimentInputs loads cfg's data (setting cfg's image shape from it) and
// builds the evaluation (on backend, or cfg.Backend's when nil),
// refinement and embedding-saving parts of the Train options.
func experimentInputs(cfg *Config, dir string, backend *metrics.Backend) (Options, error) {
	var opt Options
	ds, err := fixtures.Load(cfg.Dataset, fixtures.Options{Size: cfg.Size, Path: cfg.DataPath, Seed: cfg.DataSeed})
	if err != nil {
		return opt, err
	}
	if len(ds.Shape) == 3 { // image data: C×H×W for the cnn architecture
		cfg.InChannels, cfg.InHeight, cfg.InWidth = ds.Shape[0], ds.Shape[1], ds.Shape[2]
	}
	if err := model.Check(cfg.ModelConfig(ds.Train.X.Cols)); err != nil {
		return opt, &ConfigError{fmt.Errorf("arch %s on data set %s: %w", cfg.Arch, cfg.Dataset, err)}
	}
	opt.Train = Split{X: ds.Train.X, Labels: ds.Train.Labels}
	opt.Test = Split{X: ds.Test.X, Labels: ds.Test.Labels}
	if cfg.ValSplit > 0 {
		// Validation classes: the last round(F·C) training classes
		// (fixtures.ValSplit with a nil RNG, Roth et al. 2020's half/half
		// protocol).
		tr, val, err := fixtures.ValSplit(ds.Train, cfg.ValSplit, nil)
		if err != nil {
			return opt, err
		}
		opt.Train = Split{X: tr.X, Labels: tr.Labels}
		opt.Val = Split{X: val.X, Labels: val.Labels}
	}
	if backend == nil {
		b, err := openBackend(*cfg)
		if err != nil {
			return opt, err
		}
		backend = &b
	}
	opt.Evaluate = newEvaluator(*cfg, *backend)
	opt.Spectrum = spectra.SingularValues
	if opt.Refine, err = newRefine(*cfg, backend.Searcher); err != nil {
		return opt, err
	}
	if cfg.SaveEmbeddings {
		labels := ds.Test.Labels
		opt.FinalEmbeddings = func(emb mat32.Matrix) error {
			if err := arrays.SaveNPY(filepath.Join(dir, "test_emb.npy"), emb); err != nil {
				return err
			}
			return arrays.SaveLabelsNPY(filepath.Join(dir, "test_labels.npy"), labels)
		}
	}
	return opt, nil
}

// testTimeOptions are the refinement settings of cfg.
func testTimeOptions(cfg Config) testtime.Options {
	return testtime.Options{Mode: strings.ToLower(cfg.TestTime), K: cfg.TestTimeK, KR: cfg.TestTimeKR, Chunks: cfg.TestTimeN,
		Clusterer: cfg.TestTimeCluster, Seed: cfg.Seed}
}

// newRefine returns the test-time refinement of cfg (nil when test-time is
// none); the loss must have a message-passing network.
func newRefine(cfg Config, searcher knn.Searcher) (func(context.Context, mat32.Matrix, losses.Loss) (mat32.Matrix, error), error) {
	tt := testTimeOptions(cfg)
	if !slices.Contains(testtime.Modes, tt.Mode) {
		return nil, &ConfigError{fmt.Errorf("test-time %q: want one of %s", cfg.TestTime, strings.Join(testtime.Modes, ", "))}
	}
	if tt.Mode == "none" {
		return nil, nil
	}
	if l, err := losses.New(cfg.Loss, losses.Config{NumClasses: 2, Dim: cfg.EmbedDim, Miner: cfg.Miner, Hyper: cfg.Hyper}); err == nil {
		if _, ok := l.(losses.Refiner); !ok {
			return nil, &ConfigError{fmt.Errorf("test-time %s needs a loss with a message-passing network (mpn-ce); %s has none", tt.Mode, cfg.Loss)}
		}
	}
	tt.Searcher = searcher
	return func(ctx context.Context, emb mat32.Matrix, loss losses.Loss) (mat32.Matrix, error) {
		r, ok := loss.(losses.Refiner)
		if !ok {
			return mat32.Matrix{}, fmt.Errorf("loss %s cannot refine embeddings", loss.Name())
		}
		return testtime.Refine(ctx, emb, r, tt)
	}, nil
}

// newRecord is the run record of a (defaulted) config before training.
func newRecord(cfg Config, dir string, eo ExperimentOptions) *record.Run {
	cfgJSON, _ := json.Marshal(cfg)
	run := &record.Run{
		Schema: record.SchemaVersion, Version: eo.Version, Name: filepath.Base(filepath.Clean(dir)), Dataset: cfg.Dataset,
		Method: map[string]string{"loss": cfg.Loss, "miner": cfg.Miner, "sampler": cfg.Sampler, "arch": cfg.Arch},
		Seed:   cfg.Seed, Config: cfgJSON, Versions: eo.Versions, Status: "running",
	}
	if cfg.Miner == "" {
		run.Method["miner"] = "none"
	}
	RegularizerMethod(cfg, run.Method)
	for k, v := range eo.Method {
		if _, ok := run.Method[k]; !ok {
			run.Method[k] = v
		}
	}
	return run
}

// RegularizerMethod adds the regularisers of a (defaulted) config to the
// run.json method keys, so `dmlbench report --group-by` separates e.g.
// margin from R-margin: rho-reg=p, das=T=…,K=…, mixup=α, simix=1.
func RegularizerMethod(cfg Config, m map[string]string) {
	if cfg.RhoReg > 0 {
		m["rho-reg"] = strconv.FormatFloat(cfg.RhoReg, 'g', -1, 64)
	}
	if cfg.DAS && cfg.DASParams != nil {
		m["das"] = cfg.DASParams.String()
	}
	if cfg.Mixup {
		m["mixup"] = strconv.FormatFloat(cfg.MixupAlpha, 'g', -1, 64)
	}
	if cfg.Hyper["simix"] == 1 {
		m["simix"] = "1"
	}
}
