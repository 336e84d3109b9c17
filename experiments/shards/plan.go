package shards

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/metrics/partial"
)

// Plan is how one eval is sharded: the flags that choose shards,
// executors and merges, and the outputs sharding cannot combine with them.
type Plan struct {
	Shard    string   // --shard I/N: score one shard here
	Partial  string   // --partial DIR: where the shards write
	Merge    []string // --merge DIR…: merge partials already written
	Shards   int      // --shards N with --executor
	Executor string   // --executor local | slurm
	Parallel int      // --parallel: local shards at once
	Slurm    suite.SlurmConfig

	// The outputs and modes that decide which combinations are refused.
	Embs         int    // --emb files scored
	GallerySizes string // --gallery-sizes
	Out          string // --out
	PerQuery     string // --per-query
}

// Sharded reports whether the eval shards, runs shards or merges them.
func (p Plan) Sharded() bool { return p.Shard != "" || p.Executor != "" || len(p.Merge) > 0 }

// Check refuses the combinations that sharding cannot honour (usage
// errors).
func (p Plan) Check() error {
	switch {
	case !p.Sharded():
		if p.Shards != 0 || p.Parallel != 1 || p.Partial != "" {
			return usage.Errorf("--shards, --parallel and --partial go with --executor or --shard")
		}
		return nil
	case p.Embs > 1:
		return usage.Errorf("a sharded eval scores one --emb file (got %d)", p.Embs)
	case p.GallerySizes != "":
		return usage.Errorf("--gallery-sizes runs its evaluations here; it does not shard")
	case p.Shard != "" && p.Executor != "":
		return usage.Errorf("--shard runs one shard here; --executor runs them all: use one")
	case p.Executor != "" && len(p.Merge) > 0:
		return usage.Errorf("--executor runs the shards and merges them; --merge merges partials already written: use one")
	case p.Shard != "" && len(p.Merge) > 0:
		return usage.Errorf("--shard writes a partial result and --merge reads them: use one")
	case (p.Shard != "" || p.Executor != "") && p.Partial == "":
		return usage.Errorf("--shard and --executor need --partial DIR, where the shards write their partial results")
	case p.Shard != "" && (p.Out != "" || p.PerQuery != ""):
		return usage.Errorf("--out and --per-query write the merged result: give them to the merge (--merge DIR)")
	}
	return nil
}

// Execute runs the shards of --executor with the eval command line args
// (without the program name). Local runs them and returns the directory
// the eval that follows merges (handled false); slurm submits them with
// the merge job and prints the merge job's id on stdout (handled true).
// With no executor it does nothing.
func (p Plan) Execute(ctx context.Context, args []string, stdout, stderr io.Writer) (merge string, handled bool, err error) {
	kind := p.Executor
	if kind == "" {
		return "", false, nil
	}
	if kind != "local" && kind != "slurm" {
		return "", true, usage.Errorf("--executor %q: want local or slurm", kind)
	}
	if p.Shards < 1 {
		return "", true, usage.Errorf("--executor %s needs --shards N (N ≥ 1)", kind)
	}
	bin, err := os.Executable()
	if err != nil {
		return "", true, err
	}
	dir, err := filepath.Abs(p.Partial)
	if err != nil {
		return "", true, err
	}
	j := Job{Bin: bin, Args: Command(args), Dir: dir, Shards: p.Shards}
	if kind == "slurm" {
		cfg := p.Slurm
		s, err := Slurm(ctx, &suite.Slurm{}, j, &cfg, false, stderr)
		if err != nil {
			return "", true, err
		}
		if s.Array != "" {
			fmt.Fprintf(stderr, "eval: submitted shards %s as job %s\n", suite.ArraySpec(s.Shards, 0), s.Array)
		}
		fmt.Fprintf(stderr, "eval: merge job %s writes %s; progress: dmlbench eval status %s\n", s.Merge, ResultFile(dir), dir)
		_, err = fmt.Fprintln(stdout, s.Merge)
		return "", true, err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := RunLocal(ctx, j, p.Parallel, nil, stderr); err != nil {
		return "", true, err
	}
	return dir, false, nil
}

// Command is an eval command line without the flags that choose shards,
// executors and outputs: what every shard runs.
func Command(args []string) []string {
	drop := map[string]bool{"shard": true, "partial": true, "merge": true, "shards": true, "executor": true,
		"parallel": true, "slurm-partition": true, "slurm-time": true, "slurm-cpus": true, "slurm-mem": true,
		"out": true, "per-query": true, "cpuprofile": true}
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "-") && drop[name] {
			if !hasValue {
				i++ // every dropped flag takes a value
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// Evaluate scores in with opt as the plan says: the merge of the partial
// results in p.Merge, or with p.Shard one shard written to p.Partial
// (written true, no Result: args, the eval command line, is recorded for
// the merge), or else the whole evaluation (metrics.Evaluate).
func (p Plan) Evaluate(ctx context.Context, in metrics.Input, opt metrics.Options, args []string, stderr io.Writer) (res *metrics.Result, written bool, err error) {
	if len(p.Merge) > 0 {
		parts, _, err := partial.ReadDirs(p.Merge...)
		if err != nil {
			return nil, false, err
		}
		res, err := metrics.Merge(ctx, in, opt, parts)
		return res, false, err
	}
	if p.Shard == "" {
		res, err := metrics.Evaluate(ctx, in, opt)
		return res, false, err
	}
	sh, err := ParseShard(p.Shard)
	if err != nil {
		return nil, false, usage.Error{Err: err}
	}
	part, err := metrics.EvaluateShard(ctx, in, opt, sh)
	if err != nil {
		return nil, false, err
	}
	if err := partial.Write(p.Partial, part, Command(args)); err != nil {
		return nil, false, err
	}
	fmt.Fprintf(stderr, "eval: shard %d/%d: queries %d…%d in %.1f s → %s\n", sh.Index, sh.Count, part.Lo, part.Hi-1, part.Seconds, filepath.Join(p.Partial, partial.Name(sh)))
	return nil, true, nil
}

// MergeCommand is the command line that merges the partial results in
// dir: the eval command its shards ran (recorded with them), --merge dir,
// then extra (flags that change only the output, e.g. --format json).
func MergeCommand(dir string, extra []string) ([]string, error) {
	_, command, err := partial.ReadDirs(dir)
	if err != nil {
		return nil, err
	}
	return append(append(command, "--merge", dir), extra...), nil
}
