package cell

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
)

// writeLabels writes a data set of command cells: text labels per split
// and, for the test split only, an item list.
func writeLabels(t *testing.T, dir string) {
	t.Helper()
	for name, text := range map[string]string{
		"train_labels.txt": "a\nb\na\nc\nb\nc\n",
		"test_labels.txt":  "d\ne\nd\n",
		"test_items.txt":   "x.png\ny.png\nz.png\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAssemble: the row files hold the rows asked for, the Contract names
// them with absolute paths, the labels of each embedded set stay with
// dmlbench in row order, and the item list of a split reaches the cell
// only when the cell reads that split.
func TestAssemble(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	writeLabels(t, data)
	ds, err := LoadDataset(data)
	if err != nil {
		t.Fatal(err)
	}
	tune := Assignment{Stage: "tune", Method: "m", Trial: 2, Fold: 1, Folds: 3, Seed: 7, Epochs: 2,
		Train: RowSet{Split: "train", Rows: []int{0, 2, 3, 5}}, Embed: map[string]RowSet{"val": {Split: "train", Rows: []int{1, 4}}},
		EmbedEpochs: Epochs1To(2)}
	c, labels, err := Assemble(dir, data, *ds, tune)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	if c.Train.Rows != filepath.Join(abs, RowsFile("train")) || c.Train.Count != 4 || c.Embeddings != filepath.Join(abs, EmbDir) ||
		c.Embed["val"].Split != "train" || c.Embed["val"].Count != 2 || !reflect.DeepEqual(c.EmbedEpochs, []int{1, 2}) ||
		c.Trial != 2 || c.Fold != 1 || c.Folds != 3 || c.Seed != 7 || c.Version != ContractVersion {
		t.Fatalf("contract %+v", c)
	}
	if len(c.Items) != 0 {
		t.Fatalf("a tuning cell got item lists %v", c.Items)
	}
	if want := []int32{ds.Train.Labels[1], ds.Train.Labels[4]}; !reflect.DeepEqual(labels["val"], want) {
		t.Fatalf("val labels %v, want %v", labels["val"], want)
	}
	for name, want := range map[string][]string{"train": {"0", "2", "3", "5"}, "val": {"1", "4"}} {
		ids, names, err := arrays.LoadLabels(filepath.Join(abs, RowsFile(name)))
		var got []string
		for _, id := range ids {
			got = append(got, names[id])
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s rows %v, %v; want %v", name, got, err, want)
		}
	}

	final := tune
	final.Stage, final.Embed = "final", map[string]RowSet{"test": {Split: "test", Rows: AllRows(3)}}
	c, labels, err = Assemble(dir, data, *ds, final)
	if err != nil {
		t.Fatal(err)
	}
	if c.Items["test"] != filepath.Join(data, "test_items.txt") || !reflect.DeepEqual(labels["test"], ds.Test.Labels) {
		t.Fatalf("final: items %v, labels %v", c.Items, labels["test"])
	}

	for _, bad := range []Assignment{
		{Train: RowSet{Split: "val", Rows: []int{0}}},
		{Train: RowSet{Split: "train", Rows: []int{6}}},
		{Train: RowSet{Split: "train"}, Embed: map[string]RowSet{"train": {Split: "train"}}},
	} {
		if _, _, err := Assemble(dir, data, *ds, bad); err == nil || !strings.Contains(err.Error(), "cell rows") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
