package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// Embedding variants of the final stage (Musgrave, Belongie & Lim 2020
// §4.2): the k fold models scored one by one and averaged ("separated"),
// and scored on their concatenated test embeddings, k·d dimensions
// ("concatenated").
const (
	Separated    = "separated"
	Concatenated = "concatenated"
)

// ResultsDir holds one run.json per method, variant and final seed.
func ResultsDir(out string) string { return filepath.Join(out, "results") }

// Finish aggregates the finished final cells into ResultsDir (one record
// per method × variant × seed, method keys method, loss, miner, embedding;
// none for a method without a successful trial) and writes tune.json with
// done set. ResultsDir is rebuilt, so it holds the current spec's rows
// only. It is a no-op when tune.json already says done for this spec.
func (p *Plan) Finish(ctx context.Context, version string) error {
	if done, err := p.Finished(); err != nil || done {
		return err
	}
	s := p.Spec
	sum, err := p.Summarize()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(ResultsDir(p.Out)); err != nil {
		return err
	}
	if err := os.MkdirAll(ResultsDir(p.Out), 0o755); err != nil {
		return err
	}
	for m, me := range s.Methods {
		ms := &sum.Methods[m]
		if ms.Best < 0 {
			continue
		}
		for si, seed := range s.FinalSeeds {
			if fails := p.finalFailures(m, si); len(fails) > 0 {
				ms.FinalFailed = append(ms.FinalFailed, fails...)
				continue
			}
			sep, concat, cfg, err := p.finalMetrics(ctx, m, si)
			if err != nil {
				return err
			}
			for _, v := range []struct {
				name string
				mt   record.Metrics
			}{{Separated, sep}, {Concatenated, concat}} {
				// Settings shared by every seed of the row (reports pool only
				// runs that differ in the seed).
				info, _ := json.Marshal(map[string]any{
					"params": ms.BestParams, "trial": ms.Best, "validation_" + s.Objective: ms.BestScore,
					"folds": s.Folds, "embed-dim": cfg.EmbedDim, "eval_split": "test classes", "join": s.Join,
				})
				run := record.Run{
					Schema: record.SchemaVersion, Version: version, Name: "s" + fmt.Sprint(seed), Dataset: s.Dataset,
					Method: map[string]string{"method": me.Name, "loss": me.Loss, "miner": orNone(me.Miner), "embedding": v.name},
					Seed:   seed, Config: info, Status: "done", Final: v.mt,
				}
				dir := filepath.Join(ResultsDir(p.Out), me.Name, v.name, "s"+fmt.Sprint(seed))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				if err := record.WriteAtomic(filepath.Join(dir, trainers.RunFile), run); err != nil {
					return err
				}
			}
		}
	}
	sum.Done = true
	return record.WriteAtomic(filepath.Join(p.Out, SummaryFile), sum)
}

// finalFailures are the final cells of method m and seed index si that
// diverged or gave up (FailedFile): the seed has no row of m.
func (p *Plan) finalFailures(m, si int) []FinalFailure {
	var out []FinalFailure
	for f := range p.Spec.Folds {
		b, err := os.ReadFile(filepath.Join(p.FinalDir(m, f, si), FailedFile))
		if err == nil {
			out = append(out, FinalFailure{Seed: p.Spec.FinalSeeds[si], Fold: f, Reason: strings.TrimSpace(string(b))})
		}
	}
	return out
}

// Notes say per method of a finished tune why it has no row or fewer
// seeds than the spec's (dir is the output directory, named in them).
func (s *Summary) Notes(dir string) []string {
	var out []string
	for _, m := range s.Methods {
		if m.Best < 0 {
			out = append(out, fmt.Sprintf("%s: no row: none of its %d %s trials trained successfully (see %s)",
				m.Name, s.Budget, s.Search, filepath.Join(dir, "trials", m.Name)))
			continue
		}
		seeds := map[int64]bool{}
		for _, f := range m.FinalFailed {
			seeds[f.Seed] = true
		}
		for _, f := range m.FinalFailed {
			out = append(out, fmt.Sprintf("%s: final seed %d left out (n = %d of %d seeds): fold %d did not train: %s",
				m.Name, f.Seed, len(s.Seeds)-len(seeds), len(s.Seeds), f.Fold, f.Reason))
		}
	}
	return out
}

// Finished reports whether the output directory holds the finished
// results of this spec (tune.json done, with this spec's fingerprint).
// A spec changed in a way the directory cannot follow is an error
// (CheckSpec).
func (p *Plan) Finished() (bool, error) {
	if _, err := p.CheckSpec(); err != nil {
		return false, err
	}
	sum, err := ReadSummary(p.Out)
	if err != nil {
		return false, nil
	}
	return sum.Done && (sum.Fingerprint == nil || maps.Equal(sum.Fingerprint, p.Spec.Fingerprint())), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// finalMetrics reads the k fold models of method m and seed index si: the
// mean of their test metrics, and the metrics of their concatenated test
// embeddings.
func (p *Plan) finalMetrics(ctx context.Context, m, si int) (sep, concat record.Metrics, cfg trainers.Config, err error) {
	s := p.Spec
	sums, counts := map[string]float64{}, map[string]int{}
	var embs []mat32.Matrix
	var labels []int32
	for f := range s.Folds {
		dir := p.FinalDir(m, f, si)
		r, err := record.Read(filepath.Join(dir, trainers.RunFile))
		if err != nil || r.Status != "done" {
			return nil, nil, cfg, fmt.Errorf("final cell %s is not done", dir)
		}
		for k, v := range r.Final {
			if !math.IsNaN(v) {
				sums[k] += v
				counts[k]++
			}
		}
		c, err := ReadCell(dir)
		if err != nil {
			return nil, nil, cfg, err
		}
		cfg = c.Config
		emb, err := arrays.LoadEmbeddings(filepath.Join(dir, TestEmbFile))
		if err != nil {
			return nil, nil, cfg, fmt.Errorf("%w (run tune again: it redoes the cell)", err)
		}
		lab, _, err := arrays.LoadLabels(filepath.Join(dir, TestLabelsFile))
		if err != nil {
			return nil, nil, cfg, err
		}
		if labels == nil {
			labels = lab
		} else if !slices.Equal(labels, lab) {
			return nil, nil, cfg, fmt.Errorf("%s: test labels differ from fold 0's", dir)
		}
		embs = append(embs, emb)
	}
	sep = record.Metrics{}
	for k, v := range sums {
		sep[k] = v / float64(counts[k])
	}
	evaluate, err := trainers.NewEvaluator(cfg.WithDefaults())
	if err != nil {
		return nil, nil, cfg, err
	}
	if s.Join == JoinL2 {
		for i := range embs {
			embs[i] = UnitRows(embs[i])
		}
	}
	concat, err = evaluate(ctx, ConcatColumns(embs), labels)
	return sep, concat, cfg, err
}

// UnitRows returns m with every row scaled to unit Euclidean length
// (x / ‖x‖₂; a zero row stays zero). The concatenated row of the final
// stage joins the fold models' embeddings after this, so that each model
// weighs the same in the joined distances, as powerful-benchmarker does
// (Musgrave, Belongie & Lim 2020).
func UnitRows(m mat32.Matrix) mat32.Matrix {
	out := mat32.Matrix{Rows: m.Rows, Cols: m.Cols, Data: make([]float32, len(m.Data))}
	for i := range m.Rows {
		row := m.Data[i*m.Cols : (i+1)*m.Cols]
		var ss float64
		for _, v := range row {
			ss += float64(v) * float64(v)
		}
		if ss == 0 {
			continue
		}
		inv := 1 / math.Sqrt(ss)
		for j, v := range row {
			out.Data[i*m.Cols+j] = float32(float64(v) * inv)
		}
	}
	return out
}

// ConcatColumns joins matrices of equal row count side by side: row i of
// the result is row i of every input in order.
func ConcatColumns(ms []mat32.Matrix) mat32.Matrix {
	cols := 0
	for _, m := range ms {
		cols += m.Cols
	}
	out := mat32.Matrix{Rows: ms[0].Rows, Cols: cols, Data: make([]float32, 0, ms[0].Rows*cols)}
	for i := range out.Rows {
		for _, m := range ms {
			out.Data = append(out.Data, m.Data[i*m.Cols:(i+1)*m.Cols]...)
		}
	}
	return out
}
