package tune

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The view a tuning command sees holds the training split's files and the
// trainer's own, never a test file nor a symlink into the data set.
func TestTrainViewHidesTheTestSplit(t *testing.T) {
	data, cellDir := t.TempDir(), t.TempDir()
	files := map[string]string{
		"train_labels.npy": "a", "train_emb.npy": "b", "test_labels.npy": "c", "test_emb.npy": "d",
		"train_items.txt": "img/a.png\nimg/shared.png\n", "test_items.txt": "img/t.png\nimg/shared.png\n",
		"img/a.png": "e", "img/t.png": "f", "img/shared.png": "g", "notes.txt": "h",
	}
	for name, body := range files {
		p := filepath.Join(data, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	view, err := trainView(data, cellDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = filepath.WalkDir(view, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			t.Errorf("%s is a symlink", p)
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(view, p)
			got = append(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"img/a.png", "img/shared.png", "notes.txt", "train_emb.npy", "train_items.txt", "train_labels.npy"}
	if !slices.Equal(got, want) {
		t.Errorf("view holds %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(view, "train_emb.npy")); string(b) != "b" {
		t.Errorf("train_emb.npy reads %q", b)
	}
	// Built once: a second call (a resumed cell) reuses it.
	if v2, err := trainView(data, cellDir); err != nil || v2 != view {
		t.Errorf("second view %q, %v", v2, err)
	}
}
