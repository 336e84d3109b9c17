package trainers

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers/param"
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

// A checkpoint file is a header followed by the gob encoding of a
// checkpoint:
//
//	magic "DMLBCKPT" (8 bytes) | layout version (uint32, little-endian) |
//	payload length (uint64) | SHA-256 of the payload (32 bytes) | payload
//
// The checksum turns any damage — a flipped bit on disk or in transit, a
// truncated copy, a file written by something else — into a one-line
// error at resume instead of a resume that silently differs. Files without
// the magic are read as the bare gob of layout 1 (unchecked).
const (
	checkpointMagic   = "DMLBCKPT"
	checkpointLayout  = 2
	checkpointHeadLen = 8 + 4 + 8 + sha256.Size
)

func saveCheckpoint(path string, ck *checkpoint) error {
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(ck); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	head := make([]byte, 0, checkpointHeadLen)
	head = append(head, checkpointMagic...)
	head = binary.LittleEndian.AppendUint32(head, checkpointLayout)
	head = binary.LittleEndian.AppendUint64(head, uint64(payload.Len()))
	sum := sha256.Sum256(payload.Bytes())
	head = append(head, sum[:]...)
	if err := atomicfile.WriteFile(path, func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		_, err := w.Write(payload.Bytes())
		return err
	}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// ErrCorruptCheckpoint is wrapped by every damaged-checkpoint error; its
// text is the advice those errors end with.
var ErrCorruptCheckpoint = errors.New("delete it (and run.json) to start the run over")

func loadCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	payload := b
	if bytes.HasPrefix(b, []byte(checkpointMagic)) {
		if len(b) < checkpointHeadLen {
			return nil, fmt.Errorf("resume: checkpoint %s is truncated (%d bytes, shorter than its header): %w", path, len(b), ErrCorruptCheckpoint)
		}
		layout := binary.LittleEndian.Uint32(b[8:])
		n := binary.LittleEndian.Uint64(b[12:])
		if layout != checkpointLayout {
			return nil, fmt.Errorf("resume: checkpoint %s has layout %d, this build reads %d", path, layout, checkpointLayout)
		}
		payload = b[checkpointHeadLen:]
		if uint64(len(payload)) != n {
			return nil, fmt.Errorf("resume: checkpoint %s is damaged (%d payload bytes, its header says %d): %w", path, len(payload), n, ErrCorruptCheckpoint)
		}
		if sum := sha256.Sum256(payload); !bytes.Equal(sum[:], b[20:checkpointHeadLen]) {
			return nil, fmt.Errorf("resume: checkpoint %s is damaged (checksum mismatch): %w", path, ErrCorruptCheckpoint)
		}
	}
	var ck checkpoint
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&ck); err != nil {
		return nil, fmt.Errorf("resume: checkpoint %s is unreadable (%v): %w", path, oneLine(err), ErrCorruptCheckpoint)
	}
	if ck.Format != checkpointFormat {
		return nil, fmt.Errorf("resume: checkpoint %s has format %d, this build reads %d", path, ck.Format, checkpointFormat)
	}
	return &ck, nil
}

// oneLine keeps the first line of err's message.
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func captureParams(params []*param.Param, a *Adam) []paramState {
	out := make([]paramState, len(params))
	for k, p := range params {
		out[k] = paramState{Name: p.Name, Data: append([]float32(nil), p.Data...),
			M: append([]float32(nil), a.M[k]...), V: append([]float32(nil), a.V[k]...)}
	}
	return out
}

func restoreParams(params []*param.Param, a *Adam, st []paramState) error {
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
