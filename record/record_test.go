package record

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteAtomic leaves exactly the target, readable by all, and replaces an
// earlier file whole.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.json")
	for _, status := range []string{"running", "done"} {
		if err := WriteAtomic(p, &Run{Schema: SchemaVersion, Status: status}); err != nil {
			t.Fatal(err)
		}
		r, err := Read(p)
		if err != nil || r.Status != status {
			t.Fatalf("read back %+v %v", r, err)
		}
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %d files", len(ents))
	}
}
