// Package atomicfile is the one way dmlbench writes a file: the content goes
// to a temporary file with a unique name in the target's directory, which is
// flushed to disk (fsync) and renamed over the target only when complete,
// and the directory is then synced so that the rename itself survives a
// power loss. A reader — or the next command after a crash at any moment —
// sees the old content or the new, never a mix, and never an empty file
// where a complete one was.
//
// A crash can leave only a temporary file, named ".tmp-NAME-RANDOM" next to
// NAME; CleanTemps removes such leftovers (callers run it where they hold
// the directory's lock, so no live writer's file is removed).
package atomicfile
