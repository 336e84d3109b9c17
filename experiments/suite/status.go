package suite

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dmlbench/dmlbench/internal/record"
)

// Cell states of `dmlbench suite status`.
const (
	StateDone    = "done"
	StateRunning = "running"
	StatePending = "pending"
	StateFailed  = "failed"
	// StateInterrupted: stopped by Ctrl-C, SIGTERM or the scheduler with
	// its checkpoint kept (run.json status "interrupted"); the next
	// invocation resumes it.
	StateInterrupted = "interrupted"
)

// CellStatus is the state of one cell of a suite.
type CellStatus struct {
	Index int
	Name  string
	State string
	// Detail says where the state comes from (host and pid of a claim,
	// the Slurm task, "not submitted", sacct's state, …).
	Detail string
	// Log and ErrLine: for failed cells, the log to read and its last
	// error line.
	Log, ErrLine string
	// Seconds is the run's total time (done cells).
	Seconds float64
}

// StatusOptions are the sources of Status besides the run directories.
type StatusOptions struct {
	// Slurm, when non-nil and available, adds squeue and sacct.
	Slurm *Slurm
	// Claims judges claim files (nil: default timeout, no squeue).
	Claims *Claimer
}

// Status computes the state of every cell of jobs (cell i is jobs[i]):
// done when run.json says so; running when a live claim or squeue says so;
// pending when queued in Slurm or never started; interrupted when its
// run.json says so (stopped with its checkpoint kept); failed otherwise (a
// run that failed, or stopped and was not resubmitted), with its log. The
// advice to resume says "rerun the suite" for a suite never submitted to
// Slurm, "resubmit" for one that was.
func Status(ctx context.Context, out string, jobs []Job, opt StatusOptions) []CellStatus {
	var queued map[int]QueueEntry
	var acct map[string]string
	recorded := RecordedJobs(out)
	if opt.Slurm != nil && opt.Slurm.Available() {
		if q, ok := opt.Slurm.Queue(ctx); ok {
			queued = QueuedCells(q, recorded)
		}
		acct, _ = opt.Slurm.Accounting(ctx, recorded)
	}
	cells := make([]CellStatus, len(jobs))
	for i, j := range jobs {
		c := CellStatus{Index: i, Name: j.Name}
		rec, recErr := record.Read(filepath.Join(j.Dir, "run.json"))
		info, live := opt.Claims.Live(j.Dir)
		qe, isQueued := queued[i]
		switch {
		case recErr == nil && rec.Status == "done":
			c.State = StateDone
			c.Seconds = rec.Timings["total"]
			c.Detail = fmt.Sprintf("%.0fs", c.Seconds)
		case live:
			c.State = StateRunning
			c.Detail = fmt.Sprintf("on %s pid %d since %s", info.Host, info.PID, info.Since.Local().Format("15:04:05"))
			if info.Job != "" {
				c.Detail += ", Slurm task " + info.Job
			}
		case isQueued && qe.State == "RUNNING":
			c.State = StateRunning
			c.Detail = "Slurm task " + qe.ID
		case isQueued:
			c.State = StatePending
			c.Detail = fmt.Sprintf("Slurm task %s %s", qe.ID, strings.ToLower(qe.State))
		default:
			slurmLog := CellLog(out, i)
			runLog := filepath.Join(j.Dir, "log.txt")
			_, logErr := os.Stat(runLog)
			if recErr != nil && slurmLog == "" && logErr != nil {
				c.State = StatePending
				c.Detail = "not started"
				if len(recorded) > 0 {
					c.Detail = "not started, not queued"
				}
				break
			}
			c.State = StateFailed
			if recErr == nil && rec.Status == "interrupted" {
				c.State = StateInterrupted
			}
			// A suite that was never submitted to Slurm runs locally:
			// it resumes by running the same command again.
			again := "rerun the suite to resume"
			if len(recorded) > 0 || slurmLog != "" {
				again = "resubmit to resume"
			}
			var why []string
			if recErr == nil {
				why = append(why, "run.json: "+rec.Status)
			}
			if slurmLog != "" {
				task := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(slurmLog), fmt.Sprintf("cell%d_job", i)), ".out")
				if st, ok := acct[task+"_"+fmt.Sprint(i)]; ok {
					why = append(why, "Slurm: "+st)
				}
			}
			if _, err := os.Stat(filepath.Join(j.Dir, "checkpoint.gob")); err == nil {
				why = append(why, "checkpoint kept, "+again)
			}
			c.Detail = strings.Join(why, "; ")
			c.Log = runLog
			c.ErrLine = LastErrorLine(runLog)
			if slurmLog != "" {
				l := slurmStepLine(slurmLog) // why Slurm stopped the task, if it did
				if l == "" {
					l = LastErrorLine(slurmLog)
				}
				if l != "" {
					c.Log, c.ErrLine = slurmLog, l
				}
			}
		}
		cells[i] = c
	}
	return cells
}

// Summary counts the cells by state and estimates the time left: the mean
// duration of the finished cells × (running + pending cells) ÷ the cells
// that will run at once — the cells running now, or, when more are left,
// up to maxParallel (the array's throttle; ≤ 0: unknown, the running ones).
// Failed and interrupted cells are not counted in the ETA: they need
// another invocation.
func Summary(cells []CellStatus, maxParallel int) string {
	n := map[string]int{}
	var sum float64
	for _, c := range cells {
		n[c.State]++
		if c.State == StateDone {
			sum += c.Seconds
		}
	}
	s := fmt.Sprintf("%d cells: %d done, %d running, %d pending, %d failed", len(cells),
		n[StateDone], n[StateRunning], n[StatePending], n[StateFailed])
	if n[StateInterrupted] > 0 {
		s += fmt.Sprintf(", %d interrupted", n[StateInterrupted])
	}
	left := n[StateRunning] + n[StatePending]
	switch {
	case left == 0:
	case n[StateDone] == 0 || sum <= 0:
		s += "; ETA unknown (no finished cell yet)"
	default:
		mean := sum / float64(n[StateDone])
		par := max(1, n[StateRunning])
		if maxParallel > 0 {
			par = max(par, min(maxParallel, left))
		}
		eta := time.Duration(mean * float64(left) / float64(par) * float64(time.Second))
		s += fmt.Sprintf("; ETA %s (%.0fs per cell, %d left, %d in parallel)", eta.Round(time.Second), mean, left, par)
	}
	return s
}

// WriteStatus prints one line per cell and the summary (see Summary for
// maxParallel).
func WriteStatus(w io.Writer, cells []CellStatus, maxParallel int) error {
	width, stateWidth := 4, 7
	for _, c := range cells {
		width = max(width, len(c.Name))
		stateWidth = max(stateWidth, len(c.State))
	}
	for _, c := range cells {
		line := fmt.Sprintf("%3d  %-*s  %-*s  %s", c.Index, stateWidth, c.State, width, c.Name, c.Detail)
		if c.State == StateFailed || c.State == StateInterrupted {
			msg := c.ErrLine
			if msg == "" {
				msg = "(empty)"
			}
			line += fmt.Sprintf("\n     log %s: %s", c.Log, msg)
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(line, " ")); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, Summary(cells, maxParallel))
	return err
}

// slurmStepLine is the last line of a Slurm task log in which slurmstepd
// says why it stopped the task ("*** JOB 12 ON node3 CANCELLED AT … DUE TO
// TIME LIMIT ***"), or "".
func slurmStepLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "slurmstepd") && strings.Contains(l, "***") {
			return l
		}
	}
	return ""
}

var errorLine = regexp.MustCompile(`(?i)error|fail|panic|cancel|killed|interrupt|time limit|denied|no such`)

// LastErrorLine is the last line of the log at path that looks like an
// error (error, fail, panic, cancelled, killed, interrupted, time limit…),
// or else its last non-empty line; "" when the file is missing or empty.
// Only the last 64 KiB are read.
func LastErrorLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > tail {
		_, _ = f.Seek(st.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' || r == '\r' })
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "# ") {
			continue
		}
		if last == "" {
			last = l
		}
		if errorLine.MatchString(l) {
			last = l
			break
		}
	}
	if len(last) > 300 {
		last = last[:300] + "…"
	}
	return last
}
