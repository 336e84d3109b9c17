package trainers

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
)

func testCheckpoint() *checkpoint {
	return &checkpoint{Format: checkpointFormat, ConfigHash: "h", Epoch: 3, AdamT: 30,
		Params: []paramState{{Name: "w", Data: []float32{1, 2, 3}, M: []float32{0, 0, 0}, V: []float32{0, 0, 0}}},
		Run:    record.Run{History: []record.Epoch{{Epoch: 1, Loss: 0.5}}}}
}

// Every single-byte change of a checkpoint file is a one-line error naming
// the file, never a resume from altered state.
func TestCheckpointDamageIsAnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, CheckpointFile)
	if err := saveCheckpoint(p, testCheckpoint()); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if ck, err := loadCheckpoint(p); err != nil || ck.Epoch != 3 || ck.Params[0].Data[2] != 3 {
		t.Fatalf("round trip: %+v %v", ck, err)
	}
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadCheckpoint(p)
		if err == nil {
			t.Fatalf("byte %d of %d flipped: the checkpoint loaded", i, len(good))
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, p) {
			t.Fatalf("byte %d flipped: error %q is not one line naming the file", i, msg)
		}
	}
	for _, n := range []int{0, 5, checkpointHeadLen, len(good) - 1} {
		if err := os.WriteFile(p, good[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadCheckpoint(p); err == nil || strings.Contains(err.Error(), "\n") {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
}

// A checkpoint of layout 1 (the bare gob, no header) still resumes.
func TestCheckpointLayout1Reads(t *testing.T) {
	p := filepath.Join(t.TempDir(), CheckpointFile)
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(testCheckpoint()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if ck, err := loadCheckpoint(p); err != nil || ck.Epoch != 3 {
		t.Fatalf("layout-1 checkpoint: %+v %v", ck, err)
	}
}
