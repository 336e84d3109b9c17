package cell

import (
	"os"
	"path/filepath"
	"time"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/trainers"
)

// epochSeconds is the duration of each asked epoch of c, as run.json's
// history records it: from the previous asked epoch's embeddings (the
// latest file of its splits) or, for the first epoch an attempt writes,
// from that attempt's start, to this epoch's last file. The trainer tells
// dmlbench nothing else about its epochs; the files' modification times
// are when each epoch's output was complete. When only the last epoch is
// asked (the final stage), its duration covers every epoch before it.
func epochSeconds(dir string, c Contract, splits []string) map[int]float64 {
	var st state
	_ = readState(filepath.Join(dir, StartedFile), &st)
	out := map[int]float64{}
	var prev time.Time
	for _, e := range c.EmbedEpochs {
		var end time.Time
		for _, s := range splits {
			if t, ok := embeddingTime(c.Embeddings, s, e); ok && t.After(end) {
				end = t
			}
		}
		if end.IsZero() {
			continue
		}
		begin := prev
		for _, t := range st.Starts {
			// The attempt that wrote this epoch began after the previous file.
			if t.After(begin) && !t.After(end) {
				begin = t
			}
		}
		if !begin.IsZero() {
			out[e] = max(end.Sub(begin).Seconds(), 0)
		}
		prev = end
	}
	return out
}

// embeddingTime is when split's embeddings of epoch were written.
func embeddingTime(dir, split string, epoch int) (time.Time, bool) {
	for _, ext := range []string{".npy", ".pt"} {
		if st, err := os.Stat(filepath.Join(dir, EmbeddingFile(split, epoch)+ext)); err == nil {
			return st.ModTime(), true
		}
	}
	return time.Time{}, false
}

// cleanStaleTemps removes the temporary files of writers killed mid-write
// (atomicfile's ".tmp-" files): dmlbench's own files in the cell's
// directory and the embeddings the trainer was writing (the Python
// package's save_embeddings uses the same prefix). The caller holds the
// directory's lock, and the command is not running: no live writer's file
// is removed.
func cleanStaleTemps(dir string, c *Contract) {
	_, _ = atomicfile.CleanTemps(dir, 0, trainers.RunFile, StartedFile, DoneFile)
	_, _ = atomicfile.CleanTemps(c.Embeddings, 0)
}
