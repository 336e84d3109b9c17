package tune

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/experiments/suite"
)

// FormatParams is "k=v k=v" in key order.
func FormatParams(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return strings.Join(parts, " ")
}

// sbatchHeader writes the #SBATCH lines of the slurm: block (as a suite
// does: partition, time, cpus-per-task, mem, gpus, account, extra).
func sbatchHeader(b *strings.Builder, c *suite.SlurmConfig, name string) {
	if c == nil {
		c = &suite.SlurmConfig{}
	}
	if c.JobName != "" {
		name = c.JobName + "-" + name
	}
	fmt.Fprintf(b, "#SBATCH --job-name=%s\n", name)
	opt := func(flag, v string) {
		if v != "" {
			fmt.Fprintf(b, "#SBATCH --%s=%s\n", flag, v)
		}
	}
	opt("partition", c.Partition)
	opt("account", c.Account)
	for _, e := range c.Extra {
		fmt.Fprintf(b, "#SBATCH %s\n", e)
	}
}

func shq(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ArrayScript is the batch script of a job array over cells: each task runs
// `BIN tune SPEC --out OUT --cell $SLURM_ARRAY_TASK_ID` with the resources
// of the slurm: block (max_parallel throttles the array). Paths should be
// absolute.
func ArrayScript(c *suite.SlurmConfig, bin, spec, out string, cells []int) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	b.WriteString("# Written by `dmlbench tune --executor slurm`: one array task per cell that can run\n")
	b.WriteString("# now (cell numbers as in `dmlbench tune status`). Submitting it again is safe.\n")
	maxPar := 0
	if c != nil {
		maxPar = c.MaxParallel
	}
	sbatchHeader(&b, c, "dmlbench-tune")
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", suite.ArraySpec(cells, maxPar))
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", suite.DirectiveValue(suite.LogPattern(out)))
	if c != nil {
		if c.Time != "" {
			fmt.Fprintf(&b, "#SBATCH --time=%s\n", c.Time)
		}
		if c.CPUsPerTask > 0 {
			fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%s\n", strconv.Itoa(c.CPUsPerTask))
		}
		if c.Mem != "" {
			fmt.Fprintf(&b, "#SBATCH --mem=%s\n", c.Mem)
		}
		if c.GPUs != "" {
			fmt.Fprintf(&b, "#SBATCH --gpus=%s\n", c.GPUs)
		}
	}
	b.WriteString("set -u\n")
	fmt.Fprintf(&b, "exec %s tune %s --out %s --cell \"$SLURM_ARRAY_TASK_ID\"\n", shq(bin), shq(spec), shq(out))
	return b.String()
}

// NextScript is the follow-up job of a submitted array: once job ends
// (afterany), it runs `BIN tune SPEC --out OUT --executor slurm`, which
// proposes and submits the next batch, resubmits what failed, or finishes.
func NextScript(c *suite.SlurmConfig, bin, spec, out, job string) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	b.WriteString("# Written by `dmlbench tune --executor slurm`: proposes the next batch once the array ends.\n")
	sbatchHeader(&b, c, "dmlbench-tune-next")
	fmt.Fprintf(&b, "#SBATCH --dependency=afterany:%s\n", job)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", suite.DirectiveValue(filepath.Join(suite.SlurmDir(out), "logs", "next_job%j.out")))
	b.WriteString("#SBATCH --cpus-per-task=1\n")
	b.WriteString("set -u\n")
	fmt.Fprintf(&b, "exec %s tune %s --out %s --executor slurm\n", shq(bin), shq(spec), shq(out))
	return b.String()
}
