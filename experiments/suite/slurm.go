package suite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
)

// SlurmConfig is the `slurm:` block of a suite file: the resources of each
// array task of `dmlbench suite FILE --executor slurm`.
//
//	slurm:
//	  partition: gpu
//	  time: "04:00:00"        # per cell
//	  cpus-per-task: 4        # also the run's threads (GOMAXPROCS)
//	  mem: 16G
//	  gpus: 1                 # --gpus (e.g. a100:1)
//	  account: mylab
//	  max-parallel: 20        # the %M throttle of the array (alias max_parallel)
//	  extra: [--qos=normal, "--constraint=avx512"]   # more #SBATCH lines
//	  claim-timeout: 10m      # heartbeat age after which a cell is taken over
type SlurmConfig struct {
	Partition   string `yaml:"partition"`
	Time        string `yaml:"time"`
	CPUsPerTask int    `yaml:"cpus-per-task"`
	Mem         string `yaml:"mem"`
	GPUs        string `yaml:"gpus"`
	Account     string `yaml:"account"`
	MaxParallel int    `yaml:"max-parallel"`
	// MaxParallelSnake is the alias max_parallel of MaxParallel.
	MaxParallelSnake int    `yaml:"max_parallel"`
	JobName          string `yaml:"job-name"`
	// Extra are further #SBATCH options, one per line.
	Extra        List   `yaml:"extra"`
	ClaimTimeout string `yaml:"claim-timeout"`
}

func (c *SlurmConfig) check() error {
	if c.MaxParallel != 0 && c.MaxParallelSnake != 0 {
		return errors.New("give max-parallel or its alias max_parallel, not both")
	}
	if c.MaxParallelSnake != 0 {
		c.MaxParallel, c.MaxParallelSnake = c.MaxParallelSnake, 0
	}
	if c.MaxParallel < 0 {
		return fmt.Errorf("max-parallel = %d must be ≥ 0", c.MaxParallel)
	}
	if c.CPUsPerTask < 0 {
		return fmt.Errorf("cpus-per-task = %d must be ≥ 0", c.CPUsPerTask)
	}
	for _, v := range append([]string{c.Partition, c.Time, c.Mem, c.GPUs, c.Account, c.JobName, c.ClaimTimeout}, c.Extra...) {
		if strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("value %q holds a line break", v)
		}
	}
	for i, e := range c.Extra {
		e = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(e), "#SBATCH"))
		if !strings.HasPrefix(e, "-") {
			return fmt.Errorf("extra line %d (%q) is not an sbatch option (--name=value)", i+1, c.Extra[i])
		}
		c.Extra[i] = e
	}
	if c.ClaimTimeout != "" {
		d, err := time.ParseDuration(c.ClaimTimeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("claim-timeout %q is not a positive duration (e.g. 10m)", c.ClaimTimeout)
		}
	}
	return nil
}

// ClaimTimeout is the suite's claim timeout (DefaultClaimTimeout unless
// the slurm block sets one).
func (s *Spec) ClaimTimeout() time.Duration {
	if s.Slurm != nil && s.Slurm.ClaimTimeout != "" {
		if d, err := time.ParseDuration(s.Slurm.ClaimTimeout); err == nil && d > 0 {
			return d
		}
	}
	return DefaultClaimTimeout
}

// SlurmDir is where the batch script, the job ids and the task logs go.
func SlurmDir(out string) string { return filepath.Join(out, "slurm") }

// ArraySpec is the --array value for the cells idx (sorted, distinct):
// runs of consecutive cells become ranges, "0-3,7,9-10", followed by
// "%M" when maxParallel > 0.
func ArraySpec(idx []int, maxParallel int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(idx[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	s := strings.Join(parts, ",")
	if maxParallel > 0 {
		s += "%" + strconv.Itoa(maxParallel)
	}
	return s
}

// LogPattern is the --output of the array tasks: cell N of job J logs to
// DIR/slurm/logs/cellN_jobJ.out.
func LogPattern(out string) string {
	return filepath.Join(SlurmDir(out), "logs", "cell%a_job%A.out")
}

// WriteDirectives writes the #SBATCH lines of c's resources (partition,
// time, CPUs, memory, GPUs, account, then Extra as given).
func (c *SlurmConfig) WriteDirectives(b *strings.Builder) {
	opt := func(flag, v string) {
		if v != "" {
			fmt.Fprintf(b, "#SBATCH --%s=%s\n", flag, DirectiveValue(v))
		}
	}
	opt("partition", c.Partition)
	opt("time", c.Time)
	if c.CPUsPerTask > 0 {
		opt("cpus-per-task", strconv.Itoa(c.CPUsPerTask))
	}
	opt("mem", c.Mem)
	opt("gpus", c.GPUs)
	opt("account", c.Account)
	for _, e := range c.Extra {
		fmt.Fprintf(b, "#SBATCH %s\n", e)
	}
}

// DirectiveValue is v as the value of an #SBATCH directive: in double
// quotes when it holds white space, which sbatch otherwise takes as the
// end of the directive's argument.
func DirectiveValue(v string) string {
	if strings.ContainsAny(v, " \t") {
		return `"` + v + `"`
	}
	return v
}

// CellLog is the newest Slurm log of cell i ("" if none).
func CellLog(out string, i int) string {
	m, _ := filepath.Glob(filepath.Join(SlurmDir(out), "logs", fmt.Sprintf("cell%d_job*.out", i)))
	best, bestT := "", time.Time{}
	for _, p := range m {
		if st, err := os.Stat(p); err == nil && (best == "" || st.ModTime().After(bestT)) {
			best, bestT = p, st.ModTime()
		}
	}
	return best
}

// Script is the batch script of a job array over cells: each task runs
// `BIN suite SUITE --out OUT --cell $SLURM_ARRAY_TASK_ID`. bin, suiteFile
// and out should be absolute (the tasks start in the submit directory,
// but on other nodes).
func (s *Spec) Script(bin, suiteFile, out string, cells []int) string {
	c := s.Slurm
	if c == nil {
		c = &SlurmConfig{}
	}
	name := c.JobName
	if name == "" {
		name = "dmlbench-" + Slug(strings.TrimSuffix(filepath.Base(suiteFile), filepath.Ext(suiteFile)))
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "# Written by `dmlbench suite %s --executor slurm`: one array task per\n", filepath.Base(suiteFile))
	b.WriteString("# unfinished cell (cell N is the N-th run of `dmlbench suite FILE --dry-run`,\n")
	b.WriteString("# counting from 0). Submitting it again is safe: finished cells are skipped,\n")
	b.WriteString("# a cell another task runs is left to it, an interrupted one is resumed.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", name)
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", ArraySpec(cells, c.MaxParallel))
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", DirectiveValue(LogPattern(out)))
	c.WriteDirectives(&b)
	b.WriteString("set -u\n")
	fmt.Fprintf(&b, "exec %s --cell \"$SLURM_ARRAY_TASK_ID\"\n", shellJoin([]string{bin, "suite", suiteFile, "--out", out}))
	return b.String()
}

// Slurm runs the Slurm commands (sbatch, squeue, sacct).
type Slurm struct {
	// Run executes a command and returns its stdout; nil uses os/exec.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

func (sl *Slurm) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if sl != nil && sl.Run != nil {
		return sl.Run(ctx, name, args...)
	}
	if _, err := exec.LookPath(name); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return b, fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return b, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// Available reports whether the Slurm client commands are on PATH.
func (sl *Slurm) Available() bool {
	if sl != nil && sl.Run != nil {
		return true
	}
	_, err := exec.LookPath("sbatch")
	return err == nil
}

// Submit submits script with `sbatch --parsable` and returns the job id.
func (sl *Slurm) Submit(ctx context.Context, script string) (string, error) {
	b, err := sl.run(ctx, "sbatch", "--parsable", script)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if i := strings.IndexByte(id, ';'); i >= 0 { // "id;cluster"
		id = id[:i]
	}
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job id", strings.TrimSpace(string(b)))
	}
	return id, nil
}

// QueueEntry is a job (or array task) as squeue shows it.
type QueueEntry struct {
	ID    string // "123_4" for an array task
	State string // PENDING, RUNNING, …
}

// Queue lists this user's jobs, array tasks one per line, by id; ok is
// false when squeue is missing or fails.
func (sl *Slurm) Queue(ctx context.Context) (q map[string]QueueEntry, ok bool) {
	b, err := sl.run(ctx, "squeue", "--me", "-h", "-r", "-o", "%i|%T")
	if err != nil {
		return nil, false
	}
	q = map[string]QueueEntry{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		id, st, found := strings.Cut(strings.TrimSpace(sc.Text()), "|")
		if found {
			q[id] = QueueEntry{ID: id, State: st}
		}
	}
	return q, true
}

// Accounting returns sacct's state of the array tasks of jobs by id
// ("123_4" → "TIMEOUT"); ok is false without accounting.
func (sl *Slurm) Accounting(ctx context.Context, jobs []string) (map[string]string, bool) {
	if len(jobs) == 0 {
		return nil, false
	}
	b, err := sl.run(ctx, "sacct", "-n", "-P", "-X", "-j", strings.Join(jobs, ","), "-o", "JobID,State")
	if err != nil {
		return nil, false
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		id, st, found := strings.Cut(strings.TrimSpace(sc.Text()), "|")
		if found {
			m[id] = strings.Fields(st + " ")[0] // "CANCELLED by 0" → CANCELLED
		}
	}
	return m, true
}

// JobsFile records the submitted job ids of a suite, one per line.
func JobsFile(out string) string { return filepath.Join(SlurmDir(out), "jobs.txt") }

// RecordJob adds a submission to out/slurm/jobs.txt. The file is
// rewritten whole (atomicfile), so a crash leaves the old list or the new
// one, never a torn line.
func RecordJob(out, id string, cells []int) error {
	b, err := os.ReadFile(JobsFile(out))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, "%s %s cells %s\n", id, time.Now().UTC().Format(time.RFC3339), ArraySpec(cells, 0))
	_, _ = atomicfile.CleanTemps(SlurmDir(out), time.Minute, "jobs.txt", "suite.sbatch")
	return atomicfile.WriteBytes(JobsFile(out), b)
}

// RecordedJobs lists the job ids in out/slurm/jobs.txt, oldest first.
func RecordedJobs(out string) []string {
	b, err := os.ReadFile(JobsFile(out))
	if err != nil {
		return nil
	}
	var ids []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// QueuedCells maps the cells of the suite's recorded jobs that squeue still
// lists (pending or running) to their queue entry.
func QueuedCells(q map[string]QueueEntry, jobs []string) map[int]QueueEntry {
	cells := map[int]QueueEntry{}
	for _, id := range jobs {
		for qid, e := range q {
			task, found := strings.CutPrefix(qid, id+"_")
			if !found {
				continue
			}
			if n, err := strconv.Atoi(task); err == nil {
				cells[n] = e
			}
		}
	}
	return cells
}

// JobAlive asks squeue about one job or array task: alive while squeue
// lists it; ok is false when squeue is missing or fails for another reason
// than an unknown job id.
func (sl *Slurm) JobAlive(job string) (alive, ok bool) {
	b, err := sl.run(context.Background(), "squeue", "-h", "-j", job, "-t", "PD,R,S,CG,CF", "-o", "%T")
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return false, true
		}
		return false, false
	}
	return strings.TrimSpace(string(b)) != "", true
}
