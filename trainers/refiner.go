package trainers

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/param"
	"github.com/dmlbench/dmlbench/trainers/testtime"
)

// LoadRefiner rebuilds the message-passing network of a finished run
// (DIR/run.json and the final DIR/checkpoint.gob) for test-time refinement
// (Seidenschwarz et al. 2021 §3) of embeddings that this run's backbone produced — `dmlbench
// run --save-embeddings` writes them. It returns the refiner and the run's
// embedding dimension. Runs of losses without an MPN are refused.
func LoadRefiner(dir string) (losses.Refiner, int, error) {
	c, saved, err := loadFinishedRun(dir)
	if err != nil {
		return nil, 0, err
	}
	// The classifier's width gives the number of training classes.
	cls, ok := saved["mpn.cls.W"]
	if !ok || c.EmbedDim <= 0 || len(cls)%c.EmbedDim != 0 {
		return nil, 0, fmt.Errorf("run %s was trained with %s, which has no message-passing network (use an mpn-ce run)", dir, c.Loss)
	}
	model.UseBLAS()
	l, err := losses.New(c.Loss, losses.Config{NumClasses: len(cls) / c.EmbedDim, Dim: c.EmbedDim, Miner: c.Miner, Hyper: c.Hyper})
	if err != nil {
		return nil, 0, fmt.Errorf("run %s: %w", dir, err)
	}
	ref, ok := l.(losses.Refiner)
	if !ok {
		return nil, 0, fmt.Errorf("run %s: loss %s cannot refine embeddings", dir, c.Loss)
	}
	if err := copyParamsByName(dir, saved, l.Params()); err != nil {
		return nil, 0, err
	}
	return ref, c.EmbedDim, nil
}

// loadFinishedRun reads a finished run's config (defaults filled) and its
// final parameters by name, from DIR/run.json and DIR/checkpoint.gob.
func loadFinishedRun(dir string) (Config, map[string][]float32, error) {
	var c Config
	r, err := record.Read(filepath.Join(dir, "run.json"))
	if err != nil {
		return c, nil, err
	}
	if r.Status != "done" {
		return c, nil, fmt.Errorf("run %s has status %q; it must be a finished run", dir, r.Status)
	}
	if err := json.Unmarshal(r.Config, &c); err != nil {
		return c, nil, fmt.Errorf("config in %s/run.json: %w", dir, err)
	}
	c = c.WithDefaults()
	ck, err := loadCheckpoint(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return c, nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if ck.ConfigHash != c.Hash() || ck.Epoch != c.Epochs {
		return c, nil, fmt.Errorf("run %s: checkpoint (epoch %d, config %s) is not the final state of its run.json (%d epochs, config %s)", dir, ck.Epoch, ck.ConfigHash, c.Epochs, c.Hash())
	}
	saved := make(map[string][]float32, len(ck.Params))
	for _, p := range ck.Params {
		saved[p.Name] = p.Data
	}
	return c, saved, nil
}

// copyParamsByName copies saved values into params by name.
func copyParamsByName(dir string, saved map[string][]float32, params []*param.Param) error {
	for _, p := range params {
		v, ok := saved[p.Name]
		if !ok || len(v) != len(p.Data) {
			return fmt.Errorf("run %s: checkpoint lacks parameter %s (%d values)", dir, p.Name, len(p.Data))
		}
		copy(p.Data, v)
	}
	return nil
}

// RefineWith refines emb with the message-passing network of the
// finished run dir (LoadRefiner), in the batches tt builds (mode
// reciprocal, knn or cluster; non-negative sizes: usage errors otherwise).
func RefineWith(ctx context.Context, dir string, emb mat32.Matrix, tt testtime.Options) (mat32.Matrix, error) {
	if tt.Mode == "none" || !slices.Contains(testtime.Modes, tt.Mode) {
		return mat32.Matrix{}, usage.Errorf("--test-time %q: want reciprocal, knn or cluster with --refine", tt.Mode)
	}
	if tt.K < 0 || tt.KR < 0 || tt.Chunks < 0 {
		return mat32.Matrix{}, usage.Errorf("--test-time-k, --test-time-kr and --test-time-n must be positive")
	}
	ref, dim, err := LoadRefiner(dir)
	if err != nil {
		return mat32.Matrix{}, err
	}
	if emb.Cols != dim {
		return mat32.Matrix{}, fmt.Errorf("--refine %s: the run embeds into %d dimensions but the embeddings have %d", dir, dim, emb.Cols)
	}
	return testtime.Refine(ctx, emb, ref, tt)
}
