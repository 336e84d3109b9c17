package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/shards"
	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/metrics/partial"
)

// evalShardFlags run one evaluation as query shards (docs/scale.md).
var evalShardFlags = []cli.Flag{
	&cli.StringFlag{Name: "shard", Usage: "score query shard `I/N` only (I from 0) against the whole gallery and write its per-query terms to --partial DIR; merge with --merge DIR"},
	&cli.StringFlag{Name: "partial", Usage: "the `DIR` of the shards' partial results (with --shard or --executor)"},
	&cli.StringSliceFlag{Name: "merge", Usage: "merge the partial results in `DIR` (repeatable) into the result one eval writes, bit for bit; give the same inputs and options as the shards"},
	&cli.IntFlag{Name: "shards", Usage: "with --executor: the number of query shards"},
	&cli.StringFlag{Name: "executor", Usage: "run --shards N shards and merge them: local (processes here, --parallel at a time) | slurm (a job array and a merge job, afterok)"},
	&cli.IntFlag{Name: "parallel", Value: 1, Usage: "with --executor local: shards run at once"},
	&cli.StringFlag{Name: "slurm-partition", Usage: "with --executor slurm: #SBATCH --partition"},
	&cli.StringFlag{Name: "slurm-time", Usage: "with --executor slurm: #SBATCH --time of each task"},
	&cli.IntFlag{Name: "slurm-cpus", Usage: "with --executor slurm: #SBATCH --cpus-per-task (GOMAXPROCS of each task)"},
	&cli.StringFlag{Name: "slurm-mem", Usage: "with --executor slurm: #SBATCH --mem"},
	&cli.IntFlag{Name: "gallery-block", Usage: "memory-map the searched .npy (float32, or float16 widened into a temporary float32 file; --gallery-emb, or --emb leave-one-out) and search it `ROWS` rows at a time: the search's anonymous memory is 4·ROWS·D + 32·C·(K+1) bytes (C·(K+1) ≤ 2²², K the depth: the watch window, 1000 with mAP@1000), not the gallery's (docs/scale.md); 0 = read it into memory"},
}

// loadPair reads embeddings and labels (arrays.LoadPair); the searched
// set (gallery) is memory-mapped with --gallery-block.
func loadPair(c *cli.Context, emb, lab string, gallery, query bool) (mat32.Matrix, []int32, error) {
	if !gallery || c.Int("gallery-block") <= 0 {
		return arrays.LoadPair(emb, lab, query)
	}
	if !arrays.IsPlainNPY(emb) {
		return mat32.Matrix{}, nil, usagef("--gallery-block memory-maps a float32 or float16 .npy file; %s is not one", emb)
	}
	m, y, err := arrays.MapPair(emb, lab, query)
	if err != nil {
		return mat32.Matrix{}, nil, err
	}
	return m.Matrix(), y, nil // mapped until the process ends
}

// errShardWritten ends an eval that wrote its own output (a shard's
// partial result, a distractor curve): there is no Result to print.
var errShardWritten = errors.New("shard written")

// evaluate is metrics.Evaluate, or with --shard one shard written to
// --partial (errShardWritten), or with --merge the merge of the partials,
// or with --gallery-sizes the distractor curve (errShardWritten).
func evaluate(c *cli.Context, in metrics.Input, opt metrics.Options) (*metrics.Result, error) {
	if rows := c.Int("gallery-block"); rows > 0 {
		if opt.Backend.Searcher == nil || opt.Backend.Searcher.Name() != knn.ExactName {
			return nil, usagef("--gallery-block searches block by block with the exact backend (--backend exact)")
		}
		opt.Backend.Searcher = knn.Blocked{Searcher: opt.Backend.Searcher, Rows: rows}
	}
	if c.String("gallery-sizes") != "" {
		if err := evalDistractors(c, in, opt); err != nil {
			return nil, err
		}
		return nil, errShardWritten
	}
	if dirs := c.StringSlice("merge"); len(dirs) > 0 {
		parts, _, err := partial.ReadDirs(dirs...)
		if err != nil {
			return nil, err
		}
		return metrics.Merge(c.Context, in, opt, parts)
	}
	if c.String("shard") == "" {
		return metrics.Evaluate(c.Context, in, opt)
	}
	sh, err := shards.ParseShard(c.String("shard"))
	if err != nil {
		return nil, usageError{err}
	}
	p, err := metrics.EvaluateShard(c.Context, in, opt, sh)
	if err != nil {
		return nil, err
	}
	dir := c.String("partial")
	if err := partial.Write(dir, p, shardCommand(os.Args[1:])); err != nil {
		return nil, err
	}
	fmt.Fprintf(c.App.ErrWriter, "eval: shard %d/%d: queries %d…%d in %.1f s → %s\n", sh.Index, sh.Count, p.Lo, p.Hi-1, p.Seconds, filepath.Join(dir, partial.Name(sh)))
	return nil, errShardWritten
}

// checkShardFlags refuses flag combinations that sharding cannot honour.
func checkShardFlags(c *cli.Context, embs []string) error {
	sharded := c.String("shard") != "" || c.String("executor") != "" || len(c.StringSlice("merge")) > 0
	switch {
	case !sharded:
		if c.Int("shards") != 0 || c.Int("parallel") != 1 || c.String("partial") != "" {
			return usagef("--shards, --parallel and --partial go with --executor or --shard")
		}
		return nil
	case len(embs) > 1:
		return usagef("a sharded eval scores one --emb file (got %d)", len(embs))
	case c.String("gallery-sizes") != "":
		return usagef("--gallery-sizes runs its evaluations here; it does not shard")
	case c.String("shard") != "" && c.String("executor") != "":
		return usagef("--shard runs one shard here; --executor runs them all: use one")
	case c.String("executor") != "" && len(c.StringSlice("merge")) > 0:
		return usagef("--executor runs the shards and merges them; --merge merges partials already written: use one")
	case c.String("shard") != "" && len(c.StringSlice("merge")) > 0:
		return usagef("--shard writes a partial result and --merge reads them: use one")
	case (c.String("shard") != "" || c.String("executor") != "") && c.String("partial") == "":
		return usagef("--shard and --executor need --partial DIR, where the shards write their partial results")
	case c.String("shard") != "" && (c.String("out") != "" || c.String("per-query") != ""):
		return usagef("--out and --per-query write the merged result: give them to the merge (--merge DIR)")
	}
	return nil
}

// evalExecutor runs the shards of --executor: local runs them and leaves
// the merge to the eval that follows (handled false); slurm submits them
// with the merge job (handled true).
func evalExecutor(c *cli.Context) (handled bool, err error) {
	kind := c.String("executor")
	if kind == "" {
		return false, nil
	}
	if kind != "local" && kind != "slurm" {
		return true, usagef("--executor %q: want local or slurm", kind)
	}
	if c.Int("shards") < 1 {
		return true, usagef("--executor %s needs --shards N (N ≥ 1)", kind)
	}
	bin, err := os.Executable()
	if err != nil {
		return true, err
	}
	dir, err := filepath.Abs(c.String("partial"))
	if err != nil {
		return true, err
	}
	j := shards.Job{Bin: bin, Args: shardCommand(os.Args[1:]), Dir: dir, Shards: c.Int("shards")}
	if kind == "slurm" {
		cfg := &suite.SlurmConfig{Partition: c.String("slurm-partition"), Time: c.String("slurm-time"), CPUsPerTask: c.Int("slurm-cpus"), Mem: c.String("slurm-mem")}
		s, err := shards.Slurm(c.Context, &suite.Slurm{}, j, cfg, false, c.App.ErrWriter)
		if err != nil {
			return true, err
		}
		if s.Array != "" {
			fmt.Fprintf(c.App.ErrWriter, "eval: submitted shards %s as job %s\n", suite.ArraySpec(s.Shards, 0), s.Array)
		}
		fmt.Fprintf(c.App.ErrWriter, "eval: merge job %s writes %s; progress: dmlbench eval status %s\n", s.Merge, shards.ResultFile(dir), dir)
		fmt.Fprintln(c.App.Writer, s.Merge)
		return true, nil
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := shards.RunLocal(ctx, j, c.Int("parallel"), nil, c.App.ErrWriter); err != nil {
		return true, err
	}
	return false, c.Set("merge", dir)
}

// shardCommand is an eval command line without the flags that choose
// shards, executors and outputs: what every shard runs.
func shardCommand(args []string) []string {
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

// addEvalShard adds status and merge to the eval command (buildCommands
// adds eval first).
func addEvalShard() {
	var eval *cli.Command
	for _, cmd := range commands {
		if cmd.Name == "eval" {
			eval = cmd
		}
	}
	eval.Subcommands = append(eval.Subcommands,
		&cli.Command{
			Name:      "status",
			Usage:     "where the shards of a sharded eval stand (done, queued, running, failed) and its merge",
			UsageText: "dmlbench eval status DIR",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usagef("eval status takes the --partial DIR of a sharded eval")
				}
				_, err := shards.Status(c.Context, &suite.Slurm{}, c.Args().First(), c.App.Writer)
				return err
			},
		},
		&cli.Command{
			Name:      "merge",
			Usage:     "merge the partial results of a sharded eval with the command its shards ran (extra flags after DIR go to it, e.g. --format json)",
			UsageText: "dmlbench eval merge DIR [eval flags]",
			Action: func(c *cli.Context) error {
				if c.NArg() < 1 {
					return usagef("eval merge takes the --partial DIR of a sharded eval")
				}
				dir := c.Args().First()
				_, command, err := partial.ReadDirs(dir)
				if err != nil {
					return err
				}
				bin, err := os.Executable()
				if err != nil {
					return err
				}
				cmd := exec.CommandContext(c.Context, bin, append(append(command, "--merge", dir), c.Args().Tail()...)...)
				cmd.Stdout, cmd.Stderr = c.App.Writer, c.App.ErrWriter
				if err := cmd.Run(); err != nil {
					var exit *exec.ExitError
					if errors.As(err, &exit) {
						return cli.Exit("", exit.ExitCode())
					}
					return err
				}
				return nil
			},
		})
}
