// Package cell runs a cell of dmlbench tune with the user's own trainer:
// a command (a list, run without a shell) that reads its cell from the
// DMLBENCH_CELL environment variable (Contract), trains on the rows it is
// given, and writes per epoch the embeddings of the rows it is asked for.
// dmlbench labels those rows from the data set, scores every epoch with
// eval's engine, and writes run.json; the trainer never sees a label it
// could mislabel nor, in tuning, a test row. docs/external.md is the
// contract's reference.
//
// Exit status: 0 done; ExitDiverged (3) a configuration that cannot train
// (the trial is finished with the worst score); anything else fails the
// cell, and the next run starts the command again with DMLBENCH_RESUME=1.
package cell
