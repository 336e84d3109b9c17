package tune

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/reports"
)

// WriteStatus writes the state of the plan on w: per method the trials
// done and the best validation score (with search repeats, its rank in
// each); the cells running or failed; a summary with an ETA and whether
// the directory is finished or extended by the spec (change).
func (p *Plan) WriteStatus(ctx context.Context, w io.Writer, change Change) error {
	if change.Restart {
		_, err := fmt.Fprintf(w, "%s: the spec changed, but no cell has produced anything yet: dmlbench tune starts the directory over\n", p.Out)
		return err
	}
	sum, err := p.Summarize()
	if err != nil {
		return err
	}
	s := p.Spec
	fmt.Fprintf(w, "%s: %s search, budget %d trials per method, %d folds, objective %s (validation classes)\n",
		p.Out, s.Search, s.Budget, s.Folds, s.Objective)
	for _, m := range sum.Methods {
		done := 0
		for _, t := range m.Trials {
			if t.Done {
				done++
			}
		}
		best := "no trial finished"
		switch {
		case m.Best >= 0:
			best = fmt.Sprintf("best %s %s (trial t%03d: %s)", s.Objective, reports.FormatMetricUnit(s.Objective, float64(m.BestScore)), m.Best, FormatParams(m.BestParams))
		case done == s.Budget:
			best = "no trial trained successfully: no final row for this method"
		}
		fmt.Fprintf(w, "  %-20s %d/%d trials done; %s\n", m.Name, done, s.Budget, best)
		if len(m.RepeatRanks) > 1 {
			fmt.Fprintf(w, "  %-20s rank in each of %d search repeats: %v\n", "", len(m.RepeatRanks), m.RepeatRanks)
		}
	}
	cells := p.writeCellStates(ctx, w)
	maxPar := s.Slurm.Parallel()
	state := "in progress"
	if done, _ := p.Finished(); done {
		state = "finished: dmlbench report " + p.Out
	} else if change.Extended {
		state = "the spec extends the directory (" + strings.Join(change.Keys, ", ") + "): dmlbench tune runs the added work"
	}
	_, err = fmt.Fprintf(w, "%s; %s\n", suite.Summary(cells, maxPar), state)
	return err
}

// writeCellStates writes a line per cell running or failed (a failed
// trial's configuration named as such, a failed cell's last error line)
// and returns the state of every cell.
func (p *Plan) writeCellStates(ctx context.Context, w io.Writer) []suite.CellStatus {
	sl := &suite.Slurm{}
	jobs := p.Jobs()
	cells := suite.Status(ctx, p.Out, jobs, suite.StatusOptions{Slurm: sl, Claims: &suite.Claimer{JobAlive: sl.JobAlive}})
	for _, cs := range cells {
		if cs.State != suite.StateRunning && cs.State != suite.StateFailed {
			continue
		}
		if cs.State == suite.StateFailed {
			if _, err := os.Stat(filepath.Join(jobs[cs.Index].Dir, FailedFile)); err == nil {
				cs.Detail = "configuration failed to train: the trial counts as the worst"
			}
		}
		fmt.Fprintf(w, "%4d  %-7s  %s  %s\n", cs.Index, cs.State, cs.Name, cs.Detail)
		if cs.State == suite.StateFailed && cs.ErrLine != "" {
			fmt.Fprintf(w, "      log %s: %s\n", cs.Log, cs.ErrLine)
		}
	}
	return cells
}

// ReportNotes are the notes under the final table of the tune directory
// dir: per method the chosen trial, its validation score and
// configuration (or why it has no row); with search repeats the methods'
// ranks in each; how the separated and concatenated rows are made.
func ReportNotes(sum *Summary, dir string) []string {
	notes := sum.Notes(dir)
	for _, m := range sum.Methods {
		if m.Best < 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: best of %d %s trials t%03d, validation %s %s (mean over %d folds of the training classes); chosen %s",
			m.Name, sum.Budget, sum.Search, m.Best, sum.Objective, reports.FormatMetricUnit(sum.Objective, float64(m.BestScore)), sum.Folds, FormatParams(m.BestParams)))
	}
	if sum.SearchRepeats > 1 {
		notes = append(notes, rankNote(sum))
	}
	join := "each L2-normalised, "
	if sum.Join != JoinL2 { // raw, or a tune.json without the key: a raw join
		join = "as written, "
	}
	return append(notes, fmt.Sprintf("separated: mean over the %d fold models; concatenated: their test embeddings, %sside by side (%d·d dimensions); seeds %v",
		sum.Folds, join, sum.Folds, sum.Seeds))
}

// rankNote says per method its rank by best validation score in each
// of the search repeats and whether it holds across them.
func rankNote(sum *Summary) string {
	var parts []string
	for _, m := range sum.Methods {
		holds := "holds"
		if m.RankHolds == nil || !*m.RankHolds {
			holds = "does not hold"
		}
		ranks := make([]string, len(m.RepeatRanks))
		for i, r := range m.RepeatRanks {
			ranks[i] = strconv.Itoa(r)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", m.Name, strings.Join(ranks, ", "), holds))
	}
	return fmt.Sprintf("rank by best validation %s in each of %d searches with different search seeds: %s", sum.Objective, sum.SearchRepeats, strings.Join(parts, "; "))
}

// ReadFinished reads the summary of the tune directory dir: an error
// unless its final stage is done.
func ReadFinished(dir string) (*Summary, error) {
	sum, err := ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	if !sum.Done {
		return nil, fmt.Errorf("tune %s has not finished its final stage (see dmlbench tune status %s)", dir, sum.Spec)
	}
	return sum, nil
}

// Table is the final-stage table of the tune directory dir (summary sum):
// one row per method and embedding variant (separated, concatenated)
// unless opt groups otherwise (groupBySet), the final metrics unless
// metricsSet, test metrics over the final seeds, and ReportNotes. The
// warnings are those of the results read.
func Table(sum *Summary, dir string, opt reports.Options, groupBySet, metricsSet bool) (*reports.Report, []string, error) {
	if !groupBySet {
		opt.GroupBy = []string{"method", "embedding"}
	}
	if !metricsSet && len(sum.FinalMetrics) > 0 {
		opt.Metrics = sum.FinalMetrics
	}
	loaded, err := reports.LoadRuns([]string{ResultsDir(dir)}, reports.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	if len(loaded.Runs) == 0 {
		return nil, loaded.Warnings, fmt.Errorf("no final results under %s: %s", ResultsDir(dir), strings.Join(sum.Notes(dir), "; "))
	}
	rep, err := reports.Aggregate(loaded.Runs, opt)
	if err != nil {
		return nil, loaded.Warnings, err
	}
	rep.Notes = append(rep.Notes, ReportNotes(sum, dir)...)
	return rep, loaded.Warnings, nil
}
