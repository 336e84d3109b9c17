// Package shards runs a sharded `dmlbench eval`: the query shards as
// processes on this machine (RunLocal) or as a Slurm job array with a merge
// job that depends on it (Slurm), and reports where the shards stand
// (Status). Each shard is `dmlbench eval … --shard I/N --partial DIR`,
// which writes DIR/partial-I-of-N.json (metrics/partial) atomically; the
// merge is `dmlbench eval … --merge DIR`. A shard whose partial exists is
// done and never run again, so a run that was interrupted, or a shard that
// was killed, is finished by running or submitting the same command again.
package shards
