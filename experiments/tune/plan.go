package tune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers"
)

// SummaryFile is the tuning summary in the output directory.
const SummaryFile = "tune.json"

// IsOutDir reports whether path is the output directory of a tuning (it
// holds SummaryFile), which report tabulates as tune.Table does.
func IsOutDir(path string) bool {
	_, err := os.Stat(filepath.Join(path, SummaryFile))
	return err == nil
}

// Plan lays out the cells of a spec under an output directory. Cell
// numbers are fixed by the spec: tuning cell (method m, trial t, fold f) is
// (m·Budget + t)·Folds + f; after the M·Budget·Folds tuning cells come the
// final cells (m, f, seed index s) at ((m·Folds + f)·len(FinalSeeds) + s).
type Plan struct {
	Spec *Spec
	Out  string
	// Warn receives warnings (a final cell redone); nil discards them.
	Warn io.Writer
	// Repeat is the search repeat this plan runs (0: the main search,
	// which alone has a final stage; see Repeats).
	Repeat int
}

// NumCells is the number of cells of the spec.
func (p *Plan) NumCells() int {
	s := p.Spec
	return len(s.Methods) * s.Folds * (s.Budget + len(s.FinalSeeds))
}

func (p *Plan) tuneCells() int { return len(p.Spec.Methods) * p.Spec.Budget * p.Spec.Folds }

// TrialDir is the directory of tuning cell (m, t, f).
func (p *Plan) TrialDir(m, t, f int) string {
	return filepath.Join(p.Out, "trials", p.Spec.Methods[m].Name, fmt.Sprintf("t%03d", t), fmt.Sprintf("f%d", f))
}

// FinalDir is the directory of final cell (m, f, seed index s).
func (p *Plan) FinalDir(m, f, s int) string {
	return filepath.Join(p.Out, "final", p.Spec.Methods[m].Name, fmt.Sprintf("f%d", f), fmt.Sprintf("s%d", p.Spec.FinalSeeds[s]))
}

// CellDir is the directory of cell number i.
func (p *Plan) CellDir(i int) (string, error) {
	s := p.Spec
	if i < 0 || i >= p.NumCells() {
		return "", fmt.Errorf("cell %d is out of range: the spec has %d cells (0 to %d)", i, p.NumCells(), p.NumCells()-1)
	}
	if i < p.tuneCells() {
		f := i % s.Folds
		mt := i / s.Folds
		return p.TrialDir(mt/s.Budget, mt%s.Budget, f), nil
	}
	j := i - p.tuneCells()
	ns := len(s.FinalSeeds)
	return p.FinalDir(j/(s.Folds*ns), (j/ns)%s.Folds, j%ns), nil
}

// Job is the suite cell of directory dir: `dmlbench tune cell DIR --quiet`.
func (p *Plan) Job(i int) (suite.Job, error) {
	dir, err := p.CellDir(i)
	if err != nil {
		return suite.Job{}, err
	}
	name, _ := filepath.Rel(p.Out, dir)
	c, _ := ReadCell(dir)
	method := map[string]string{}
	seed := int64(0)
	if c != nil {
		method["method"] = c.Method
		seed = c.Config.Seed
	}
	return suite.Job{Kind: suite.Train, Name: name, Dir: dir, Args: []string{"tune", "cell", dir, "--quiet"}, Dataset: p.Spec.Dataset, Method: method, Seed: seed}, nil
}

// Jobs lists every cell of the plan, written or not (cell i is Jobs()[i]).
func (p *Plan) Jobs() []suite.Job {
	jobs := make([]suite.Job, p.NumCells())
	for i := range jobs {
		jobs[i], _ = p.Job(i)
	}
	return jobs
}

// Trial is a tuning trial of one method as found on disk.
type Trial struct {
	Index  int               `json:"trial"`
	Params map[string]string `json:"params"`
	// Score is the mean over folds of the objective at each fold's best
	// epoch (NaN when a fold's configuration failed to train).
	Score      Value   `json:"score"`
	FoldScores []Value `json:"fold_scores"`
	BestEpochs []int   `json:"best_epochs"`
	// Done: every fold finished (or the configuration failed).
	Done bool `json:"-"`
	// Failed: the configuration failed to train on a fold (TrialFailed).
	Failed bool `json:"failed,omitempty"`
	point  search.Point
}

// trials reads the trials of method m that have been proposed.
func (p *Plan) trials(m int) ([]Trial, error) {
	s := p.Spec
	var out []Trial
	for t := range s.Budget {
		c, err := ReadCell(p.TrialDir(m, t, 0))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		pt, err := ParsePoint(s.Methods[m].Space, c.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.TrialDir(m, t, 0), err)
		}
		tr := Trial{Index: t, Params: c.Params, point: pt, Done: true, FoldScores: make([]Value, s.Folds), BestEpochs: make([]int, s.Folds)}
		for f := range tr.FoldScores {
			tr.FoldScores[f] = Value(math.NaN()) // until the fold is done
		}
		sum := 0.0
		for f := range s.Folds {
			dir := p.TrialDir(m, t, f)
			if _, err := os.Stat(filepath.Join(dir, FailedFile)); err == nil {
				tr.FoldScores[f] = Value(math.NaN())
				sum = math.NaN()
				continue
			}
			r, err := record.Read(filepath.Join(dir, trainers.RunFile))
			if err != nil || r.Status != "done" {
				tr.Done = false
				continue
			}
			sc, ep, ok := FoldScore(r, s.Objective)
			if !ok {
				sc = math.NaN()
			}
			tr.FoldScores[f], tr.BestEpochs[f] = Value(sc), ep
			sum += sc
		}
		tr.Score = Value(math.NaN())
		if tr.Done {
			tr.Score = Value(sum / float64(s.Folds))
		}
		tr.Failed = tr.Done && math.IsNaN(sum)
		out = append(out, tr)
	}
	return out, nil
}

// methodSeed gives each method its own search stream, so that adding a
// method leaves the trials of the others unchanged.
func methodSeed(seed int64, name string) int64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return seed ^ int64(h)
}

// proposerFor is the proposer of method m.
func (p *Plan) proposerFor(m int) search.Proposer {
	seed := p.searchSeed(m)
	if p.Spec.Search == "random" {
		return search.Random{Seed: seed}
	}
	t := p.Spec.TPE
	t.Seed = seed
	return t
}

// Next writes the cells that can run now and returns their numbers: per
// method, the unfinished cells of its earliest unfinished batch of
// max_parallel trials (proposed from all trials before the batch, written
// on first use); once a method's trials are done, its unfinished final
// cells, whatever the other methods' state (a method whose cells keep
// failing holds back no other). stage is StageFinal once every method's
// trials are done. It returns no cells when everything is done. Tuning
// cells whose configuration failed count as done, as do final cells that
// diverged or gave up (their seed is left out of the method's row).
func (p *Plan) Next() (cells []int, stage string, err error) {
	s := p.Spec
	allTuned := true
	for m := range s.Methods {
		tr, err := p.trials(m)
		if err != nil {
			return nil, "", err
		}
		first := 0
		for first < len(tr) && tr[first].Done {
			first++
		}
		if first == s.Budget {
			if p.Repeat == 0 {
				more, err := p.nextFinal(m, tr)
				if err != nil {
					return nil, "", err
				}
				cells = append(cells, more...)
			}
			continue
		}
		allTuned = false
		more, err := p.nextTrials(m, tr, first)
		if err != nil {
			return nil, "", err
		}
		cells = append(cells, more...)
	}
	sort.Ints(cells)
	if !allTuned || p.Repeat > 0 {
		return cells, StageTune, nil
	}
	return cells, StageFinal, nil
}

// nextTrials writes the batch of method m that holds trial first (its
// earliest unfinished) and returns its unfinished cells.
func (p *Plan) nextTrials(m int, tr []Trial, first int) ([]int, error) {
	s := p.Spec
	var cells []int
	b0 := first / s.MaxParallel * s.MaxParallel
	n := min(s.MaxParallel, s.Budget-b0)
	if b0+n > len(tr) { // some of the batch not written yet
		// The search maximises: a lower-is-better score is negated
		// for it and nowhere else.
		sign := 1.0
		if s.lowerIsBetter() {
			sign = -1
		}
		hist := make([]search.Observation, b0)
		for i := range b0 {
			hist[i] = search.Observation{Point: tr[i].point, Score: sign * float64(tr[i].Score)}
		}
		pts := p.proposerFor(m).Propose(s.Methods[m].Space, hist, b0, n)
		for j, pt := range pts {
			if t := b0 + j; t >= len(tr) {
				if err := p.writeTrial(m, t, pt); err != nil {
					return nil, err
				}
			}
		}
	}
	for t := b0; t < b0+n; t++ {
		for f := range s.Folds {
			if !p.cellFinished(p.TrialDir(m, t, f)) {
				cells = append(cells, (m*s.Budget+t)*s.Folds+f)
			}
		}
	}
	return cells, nil
}

// nextFinal writes the final cells of method m, whose trials are done,
// and returns the unfinished ones.
func (p *Plan) nextFinal(m int, tr []Trial) ([]int, error) {
	s := p.Spec
	if err := p.writeFinal(m, tr); err != nil {
		return nil, err
	}
	var cells []int
	ns := len(s.FinalSeeds)
	for f := range s.Folds {
		for si := range ns {
			dir := p.FinalDir(m, f, si)
			if _, err := os.Stat(filepath.Join(dir, CellFile)); err != nil {
				continue // a method without a successful trial has no final cells
			}
			if !p.finalFinished(dir) {
				cells = append(cells, p.tuneCells()+(m*s.Folds+f)*ns+si)
			}
		}
	}
	return cells, nil
}

// finalFinished reports whether a final cell is done with its test
// embeddings on disk. A done cell whose embeddings are gone is marked to
// run again (its run.json set aside as run.json.stale).
func (p *Plan) finalFinished(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, FailedFile)); err == nil {
		return true // diverged or gave up: left out of the row (Finish)
	}
	if !suite.IsDone(dir) {
		return false
	}
	for _, f := range []string{TestEmbFile, TestLabelsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			run := filepath.Join(dir, trainers.RunFile)
			if p.Warn != nil {
				fmt.Fprintf(p.Warn, "tune: %s is done but %s is missing; the cell runs again\n", dir, f)
			}
			_ = os.Rename(run, run+".stale")
			return false
		}
	}
	return true
}

func (s *Spec) lowerIsBetter() bool { return metrics.LowerIsBetter(s.Objective) }

func (p *Plan) cellFinished(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, FailedFile)); err == nil {
		return true
	}
	return suite.IsDone(dir)
}

// writeTrial writes the cell.json of every fold of trial t of method m.
func (p *Plan) writeTrial(m, t int, pt search.Point) error {
	s := p.Spec
	me := s.Methods[m]
	pt = roundPoint(me.Space, pt)
	cfg, err := s.Config(me, pt, s.Seed)
	if err != nil {
		return err
	}
	cfg.Metrics, cfg.EvalEvery = []string{s.Objective}, 1
	params := map[string]string{}
	for i, q := range me.Space {
		params[q.Name] = q.Format(pt[i])
	}
	// Fold 0 last: its cell.json marks the trial as proposed.
	for f := s.Folds - 1; f >= 0; f-- {
		c := Cell{Stage: StageTune, Method: me.Name, Trial: t, Fold: f, Folds: s.Folds, Params: params, Objective: s.Objective, Config: cfg}
		s.commandCell(me, &c)
		if err := writeCell(p.TrialDir(m, t, f), &c); err != nil {
			return err
		}
	}
	return nil
}

// writeFinalCell writes the final cell c into dir unless dir holds it
// already; a final cell of another trial (the best trial changed when the
// budget grew) is removed first, so no row mixes two configurations.
func writeFinalCell(dir string, c *Cell) error {
	if old, err := ReadCell(dir); err == nil {
		a, _ := json.Marshal(old)
		b, _ := json.Marshal(c)
		if bytes.Equal(a, b) {
			return nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return writeCell(dir, c)
}

func writeCell(dir string, c *Cell) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return record.WriteAtomic(filepath.Join(dir, CellFile), c)
}

// Best is the trial of a method with the best score (the highest, or the
// lowest when lower is better; the earliest of tied ones); ok is false
// when no trial has a finite score.
func Best(trials []Trial, lower bool) (best Trial, ok bool) {
	for _, t := range trials {
		if t.Done && !math.IsNaN(float64(t.Score)) && (!ok || better(float64(t.Score), float64(best.Score), lower)) {
			best, ok = t, true
		}
	}
	return best, ok
}

// writeFinal writes the final cells of method m: its best trial's
// configuration on each fold's training classes, for the epochs that fold
// chose on validation, once per final seed.
func (p *Plan) writeFinal(m int, tr []Trial) error {
	s := p.Spec
	me := s.Methods[m]
	best, ok := Best(tr, s.lowerIsBetter())
	if !ok {
		// No row for this method (the report says why); the others go on.
		return os.RemoveAll(filepath.Join(p.Out, "final", me.Name))
	}
	for f := range s.Folds {
		for si, seed := range s.FinalSeeds {
			cfg, err := s.Config(me, best.point, seed)
			if err != nil {
				return err
			}
			schedule := cfg.Epochs
			cfg.Epochs = best.BestEpochs[f]
			cfg.Metrics, cfg.EvalEvery = s.FinalMetrics, max(1, cfg.Epochs)
			c := Cell{Stage: StageFinal, Method: me.Name, Trial: best.Index, Fold: f, Folds: s.Folds, Params: best.Params, Objective: s.Objective, Config: cfg,
				ScheduleEpochs: schedule}
			s.commandCell(me, &c)
			if err := writeFinalCell(p.FinalDir(m, f, si), &c); err != nil {
				return err
			}
		}
	}
	return nil
}

// MethodSummary is one method in tune.json.
type MethodSummary struct {
	Name   string  `json:"name"`
	Loss   string  `json:"loss"`
	Miner  string  `json:"miner,omitempty"`
	Trials []Trial `json:"trials"`
	// Best is the index of the best trial (−1 before any finished).
	Best       int               `json:"best"`
	BestParams map[string]string `json:"best_params,omitempty"`
	BestScore  Value             `json:"best_score"`
	// RepeatBest and RepeatRanks are the method's best validation score
	// and its rank among the methods in each search repeat (repeat 0
	// first); RankHolds: the rank is the same in every repeat.
	RepeatBest  []Value `json:"repeat_best,omitempty"`
	RepeatRanks []int   `json:"repeat_ranks,omitempty"`
	RankHolds   *bool   `json:"rank_holds,omitempty"`
	// FinalFailed are the final cells that diverged or gave up (Finish):
	// their seeds are left out of the method's rows.
	FinalFailed []FinalFailure `json:"final_failed,omitempty"`
}

// FinalFailure is a final cell that did not train: its seed, fold and why.
type FinalFailure struct {
	Seed   int64  `json:"seed"`
	Fold   int    `json:"fold"`
	Reason string `json:"reason"`
}

// Summary is tune.json: the protocol settings and every trial's score.
type Summary struct {
	Spec      string `json:"spec"`
	Dataset   string `json:"dataset"`
	Search    string `json:"search"`
	Objective string `json:"objective"`
	// LowerIsBetter: the objective is better when lower (scores keep
	// their sign; the best trial has the lowest).
	LowerIsBetter bool    `json:"lower_is_better,omitempty"`
	Budget        int     `json:"budget"`
	Folds         int     `json:"folds"`
	Seeds         []int64 `json:"final_seeds"`
	// FinalMetrics are the test metrics of the final stage (empty: the
	// trainer's default set).
	FinalMetrics []string `json:"final_metrics,omitempty"`
	// SearchRepeats is the number of searches per method (search-repeats).
	SearchRepeats int `json:"search_repeats,omitempty"`
	// Join is how the concatenated rows join the fold models' embeddings.
	Join    string          `json:"join,omitempty"`
	Methods []MethodSummary `json:"methods"`
	// Done: the final stage finished and results/ holds its records.
	Done bool `json:"done"`
	// Fingerprint is the spec's (Spec.Fingerprint): a rerun with another
	// spec is refused unless it only extends this one.
	Fingerprint map[string]string `json:"fingerprint,omitempty"`
}

// Summarize reads the trials of every method.
func (p *Plan) Summarize() (*Summary, error) {
	s := p.Spec
	abs, _ := filepath.Abs(s.File)
	sum := &Summary{Spec: abs, Dataset: s.Dataset, Search: s.Search, Objective: s.Objective, LowerIsBetter: s.lowerIsBetter(), Budget: s.Budget, Folds: s.Folds, Seeds: s.FinalSeeds, FinalMetrics: s.FinalMetrics, Join: s.Join, Fingerprint: s.Fingerprint()}
	for m, me := range s.Methods {
		tr, err := p.trials(m)
		if err != nil {
			return nil, err
		}
		ms := MethodSummary{Name: me.Name, Loss: me.Loss, Miner: me.Miner, Trials: tr, Best: -1, BestScore: Value(math.NaN())}
		if b, ok := Best(tr, s.lowerIsBetter()); ok {
			ms.Best, ms.BestParams, ms.BestScore = b.Index, b.Params, b.Score
		}
		sum.Methods = append(sum.Methods, ms)
	}
	return sum, p.summarizeRepeats(sum)
}

// ReadSummary reads dir/tune.json.
func ReadSummary(dir string) (*Summary, error) {
	var s Summary
	if err := readJSON(filepath.Join(dir, SummaryFile), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// BestSoFar is the running best (maximum, or minimum when lower is
// better) of a method's trial scores in trial order (failed trials keep
// the previous best; NaN until the first finite score).
func BestSoFar(trials []Trial, lower bool) []float64 {
	out := make([]float64, len(trials))
	best := math.NaN()
	for i, t := range trials {
		if sc := float64(t.Score); !math.IsNaN(sc) && (math.IsNaN(best) || better(sc, best, lower)) {
			best = sc
		}
		out[i] = best
	}
	return out
}

// roundPoint rounds range values to 4 significant digits, so that the
// recorded parameters are short and are exactly what the trial trains with.
func roundPoint(space search.Space, pt search.Point) search.Point {
	out := append(search.Point(nil), pt...)
	for i, p := range space {
		if !p.Categorical() && !p.Int && out[i] != 0 {
			v, _ := strconv.ParseFloat(strconv.FormatFloat(out[i], 'g', 4, 64), 64)
			out[i] = math.Min(math.Max(v, p.Low), p.High)
		}
	}
	return out
}
