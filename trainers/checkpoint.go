package trainers

import (
	"encoding/gob"
	"fmt"
	"io"
	"os"

	"github.com/dmlbench/dmlbench/record"
	"github.com/dmlbench/dmlbench/trainers/losses"
)

// checkpointFormat is bumped when the checkpoint layout changes.
const checkpointFormat = 1

// CheckpointFile is the checkpoint's name inside a run directory.
const CheckpointFile = "checkpoint.gob"

type paramState struct {
	Name string
	Data []float32
	M, V []float32
}

// checkpoint is everything needed to continue a run after epoch Epoch: the
// RNG streams of later epochs are derived from (seed, epoch), so the epoch
// position is the RNG state.
type checkpoint struct {
	Format     int
	ConfigHash string
	Epoch      int // completed epochs
	AdamT      int64
	Params     []paramState
	Augment    []byte // memory of a stateful augmenter (DAS recorder and banks); nil if none
	Run        record.Run
	BestVal    float64
	HasBest    bool
}

func saveCheckpoint(path string, ck *checkpoint) error {
	if err := record.WriteFile(path, func(w io.Writer) error { return gob.NewEncoder(w).Encode(ck) }); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func loadCheckpoint(path string) (*checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	defer f.Close()
	var ck checkpoint
	if err := gob.NewDecoder(f).Decode(&ck); err != nil {
		return nil, fmt.Errorf("resume: read checkpoint %s: %w", path, err)
	}
	if ck.Format != checkpointFormat {
		return nil, fmt.Errorf("resume: checkpoint %s has format %d, this build reads %d", path, ck.Format, checkpointFormat)
	}
	return &ck, nil
}

func captureParams(params []*losses.Param, a *Adam) []paramState {
	out := make([]paramState, len(params))
	for k, p := range params {
		out[k] = paramState{Name: p.Name, Data: append([]float32(nil), p.Data...),
			M: append([]float32(nil), a.M[k]...), V: append([]float32(nil), a.V[k]...)}
	}
	return out
}

func restoreParams(params []*losses.Param, a *Adam, st []paramState) error {
	if len(st) != len(params) {
		return fmt.Errorf("resume: checkpoint has %d parameter tensors, model and loss have %d", len(st), len(params))
	}
	for k, p := range params {
		s := st[k]
		if s.Name != p.Name || len(s.Data) != len(p.Data) || len(s.M) != len(p.Data) || len(s.V) != len(p.Data) {
			return fmt.Errorf("resume: checkpoint tensor %q (%d values) does not match %q (%d values)", s.Name, len(s.Data), p.Name, len(p.Data))
		}
		copy(p.Data, s.Data)
		copy(a.M[k], s.M)
		copy(a.V[k], s.V)
	}
	return nil
}
