// Package suite expands a YAML grid of experiments (datasets × losses ×
// miners × samplers × regularisers × embedding dims × batch sizes × seeds)
// into runs and executes each one as a separate process of the dmlbench
// binary (`dmlbench run … --out DIR`, or `dmlbench eval --format json` for
// existing embeddings), so a suite depends only on the command line, not on
// the trainer's Go API. Every run owns a directory named deterministically
// from its grid point (omniglot/margin-distance-spc2/s0) holding run.json
// and log.txt; runs whose run.json says "done" are skipped, so a killed
// suite resumes where it stopped.
//
// Why a child process per cell rather than a call to trainers.RunExperiment
// in this process: (1) isolation — a cell that panics inside C code (faiss),
// runs out of memory or is killed by the kernel's OOM killer ends only its
// own process; the suite records the cell as failed (run.json with status
// "failed" and the child's last error line) and goes on; (2) per-cell logs —
// log.txt receives everything the cell writes, including what C libraries
// print straight to file descriptors 1 and 2, which concurrent in-process
// cells could not keep apart; (3) one code path — a local suite, a Slurm
// array task (`suite FILE --cell N`) and a hand-typed `dmlbench run` all
// execute the same command, whose first line in log.txt is a copy-pasteable
// reproduction, and all take the run-directory lock and resume from the
// checkpoint the same way; (4) no process-wide state shared between cells
// run at once (GOMAXPROCS, BLAS and faiss thread counts); (5) cancellation —
// SIGINT to the child lets the trainer stop, keeping the checkpoint of
// its last finished epoch, and the parent-death signal (proc_linux.go) ends children
// whose suite was killed. The cost, a process start and a data set load per
// cell, is small next to a training run.
//
// A suite file is checked whole before anything runs: Parse refuses
// unknown keys (naming the nearest known one), values of the wrong type
// (cpus-per-task: 1.5) and the same seed written twice, listing every
// problem once (ProblemsError); Spec.Check asks a Checker — the command
// line's registries and flag sets — about every method name and every
// cell's arguments.
//
// Cell N of a suite is Jobs()[N] (the order of `suite --dry-run`). Every
// invocation claims a cell before running it (Claimer: a claim.json created
// create-exclusive in the NFS-safe way, with a heartbeat and a stale-claim
// timeout), so concurrent invocations — local ones and Slurm array tasks
// on many nodes — never run a cell twice. Spec.Script writes the batch
// script of `--executor slurm` (a job array over the unfinished cells, with
// the resources of the `slurm:` block, SlurmConfig); Status reports each
// cell from the run directories, claims, squeue and sacct. A cancelled
// Run (Ctrl-C) reports the cells it stopped as interrupted, not failed
// (Result.Interrupted, ErrInterrupted): they keep their checkpoints and
// the next invocation resumes them. See docs/slurm.md and docs/recovery.md.
//
// Suite file (relative paths are relative to the file):
//
//	out: runs/omniglot          # default: the file's name without extension
//	epochs: 5                   # --epochs for every run (0 included; left out: the trainer's default)
//	quiet: true                 # pass --quiet (default true)
//	extra: --lr 1e-3            # free-form flags for every run
//	grid:                       # or grids: [ {…}, {…} ]
//	  dataset: omniglot
//	  loss: [margin, triplet, contrastive]
//	  miner: distance
//	  sampler: spc-2
//	  regularizer: [none]       # --regularizer, left out of the name if none
//	  embed-dim: [64]           # --embed-dim
//	  batch-size: [112]         # --batch-size
//	  seed: [0, 1, 2]
//	  extra: [--hidden, "256"]  # appended after the suite-wide extra flags
//	  tag: wide                 # appended to the directory name
//	eval:                       # score existing embeddings
//	  - name: imagenet
//	    dataset: cub200
//	    method: {loss: imagenet}
//	    seed: 0
//	    emb: feats/cub_test.npy
//	    labels: feats/cub_test_labels.npy
//	    extra: --compat roth
package suite
