package main

import (
	"errors"
	"os"
	"os/exec"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/shards"
	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
)

// evalShardFlags run one evaluation as query shards (docs/scale.md).
func evalShardFlags() []cli.Flag {
	return []cli.Flag{
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
	res, written, err := shardPlan(c, nil).Evaluate(c.Context, in, opt, os.Args[1:], c.App.ErrWriter)
	if written {
		return nil, errShardWritten
	}
	return res, err
}

// shardPlan is the sharding of eval's command line c, scoring embs.
func shardPlan(c *cli.Context, embs []string) shards.Plan {
	return shards.Plan{Shard: c.String("shard"), Partial: c.String("partial"), Merge: c.StringSlice("merge"),
		Shards: c.Int("shards"), Executor: c.String("executor"), Parallel: c.Int("parallel"),
		Slurm: suite.SlurmConfig{Partition: c.String("slurm-partition"), Time: c.String("slurm-time"), CPUsPerTask: c.Int("slurm-cpus"), Mem: c.String("slurm-mem")},
		Embs:  len(embs), GallerySizes: c.String("gallery-sizes"), Out: c.String("out"), PerQuery: c.String("per-query")}
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
				args, err := shards.MergeCommand(c.Args().First(), c.Args().Tail())
				if err != nil {
					return err
				}
				bin, err := os.Executable()
				if err != nil {
					return err
				}
				cmd := exec.CommandContext(c.Context, bin, args...)
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
