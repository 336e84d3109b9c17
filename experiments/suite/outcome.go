package suite

import (
	"fmt"
	"io"
)

// Parallel is the slurm block's max-parallel, 0 without a block.
func (c *SlurmConfig) Parallel() int {
	if c == nil {
		return 0
	}
	return c.MaxParallel
}

// WritePlan writes what a dry run of the suite would do: per cell its
// state (done, busy: another process runs it, todo), number, name and
// command line, then a summary line naming the output directory.
func WritePlan(w io.Writer, jobs []Job, bin, out string, claims *Claimer) {
	todo, busy := 0, 0
	for i, j := range jobs {
		state := "todo"
		if IsDone(j.Dir) {
			state = "done"
		} else if _, live := claims.Live(j.Dir); live {
			state = "busy" // another suite process runs it
			busy++
		} else {
			todo++
		}
		fmt.Fprintf(w, "%-4s %3d %s\n     %s\n", state, i, j.Name, CommandLine(bin, j))
	}
	elsewhere := ""
	if busy > 0 {
		elsewhere = fmt.Sprintf(", %d run by another process", busy)
	}
	fmt.Fprintf(w, "%d runs, %d to do%s, output in %s\n", len(jobs), todo, elsewhere, out)
}

// WriteSummary writes the outcome of a suite of total runs whose results
// are in out and, when nothing failed (err nil), the next command.
func (r *Result) WriteSummary(w io.Writer, total int, out string, err error) {
	busy := ""
	if len(r.Interrupted) > 0 {
		busy = fmt.Sprintf(", %d interrupted", len(r.Interrupted))
	}
	if len(r.Busy) > 0 {
		busy += fmt.Sprintf(", %d run by another process", len(r.Busy))
	}
	fmt.Fprintf(w, "suite: %d runs: %d done now, %d done before, %d failed%s; results in %s\n",
		total, len(r.Done), len(r.Skipped), len(r.Failed), busy, out)
	if len(r.Failed) == 0 && err == nil {
		fmt.Fprintf(w, "next: dmlbench report %s --format markdown\n", out)
	}
}

// CellOutcome says what became of cell n, run alone (`suite --cell n`):
// done, already done, run by another process or interrupted ("" when it
// failed: the error says so).
func (r *Result) CellOutcome(n int) string {
	switch {
	case len(r.Done) > 0:
		return fmt.Sprintf("suite: cell %d done", n)
	case len(r.Skipped) > 0:
		return fmt.Sprintf("suite: cell %d was already done", n)
	case len(r.Busy) > 0:
		return fmt.Sprintf("suite: cell %d is run by another process: nothing to do", n)
	case len(r.Interrupted) > 0:
		return fmt.Sprintf("suite: cell %d interrupted, its checkpoint kept: run the same command again (or resubmit the suite) to resume", n)
	}
	return ""
}

// MissingNotes are the report notes of suite directories still running:
// for each path holding a suite manifest (suite.json), the number of
// cells whose run is not done yet.
func MissingNotes(paths []string) []string {
	var notes []string
	for _, p := range paths {
		missing, total, file, ok, err := Missing(p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("suite %s: %v", p, err))
			continue
		}
		if ok && missing > 0 {
			notes = append(notes, fmt.Sprintf("suite %s: %d of %d cells missing (not finished yet; see dmlbench suite status %s)", p, missing, total, file))
		}
	}
	return notes
}
