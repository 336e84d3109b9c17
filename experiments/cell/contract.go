package cell

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
)

// Environment variables of a command cell.
const (
	EnvCell   = "DMLBENCH_CELL"   // the Contract as JSON
	EnvResume = "DMLBENCH_RESUME" // "1" when the command is started again after an interruption
)

// ExitDiverged is the exit status by which a trainer says that its
// configuration cannot train (e.g. the loss became NaN).
const ExitDiverged = 3

// ContractVersion is the version of the Contract's fields.
const ContractVersion = 1

// Rows names rows of a data set split for the trainer: Split is "train" or
// "test" (the data set's DATA/{split}_labels.npy), Rows an .npy file of
// int64 row numbers into that split, Count their number.
type Rows struct {
	Split string `json:"split"`
	Rows  string `json:"rows"`
	Count int    `json:"count"`
}

// Contract is what DMLBENCH_CELL holds.
type Contract struct {
	Version int    `json:"version"`
	Stage   string `json:"stage"` // "tune" or "final"
	Method  string `json:"method"`
	Trial   int    `json:"trial"`
	Fold    int    `json:"fold"`
	Folds   int    `json:"folds"`
	// Params are the method's fixed settings and this trial's values, by
	// their names in the spec.
	Params map[string]any `json:"params"`
	Seed   int64          `json:"seed"`
	// Epochs is how many epochs this cell trains; ScheduleEpochs the
	// length a learning-rate schedule is sized from. They differ in the
	// final stage: Epochs is the epoch chosen on validation, ScheduleEpochs
	// the tuning cells' epoch count, so the final run repeats the schedule
	// that was validated and stops at the chosen epoch.
	Epochs         int `json:"epochs"`
	ScheduleEpochs int `json:"schedule_epochs"`
	// Dir is the cell's directory (for checkpoints); Data the data set's
	// directory; Items, per split, its list of item paths when present.
	Dir   string            `json:"dir"`
	Data  string            `json:"data"`
	Items map[string]string `json:"items,omitempty"`
	// Train are the rows to train on (the fold's training classes only).
	Train Rows `json:"train"`
	// Embed are the rows whose embeddings are asked, by name: "val" in
	// tuning (a fold of the training classes), "test" in the final stage.
	Embed map[string]Rows `json:"embed"`
	// EmbedEpochs are the epochs (1-based) after which they are asked.
	EmbedEpochs []int `json:"embed_epochs"`
	// Embeddings is the directory where they go: SPLIT_eNNN.npy (or .pt).
	Embeddings string `json:"embeddings"`
	Resume     bool   `json:"resume"`
}

// Split is a data set split as a command cell sees it: dense label ids
// (ClassNames[id] the original label) and, when the data set has one, the
// file listing its items.
type Split struct {
	Labels     []int32
	ClassNames []string
	Items      string
}

// Dataset is the user's data set of command cells: DIR/train_labels.npy
// and DIR/test_labels.npy (or .txt, one label per line), and optionally
// DIR/{train,test}_items.txt listing the items (e.g. image paths) the
// trainer loads itself. dmlbench reads the labels only.
type Dataset struct {
	Dir         string
	Train, Test Split
}

// LoadDataset reads the label files of dir.
func LoadDataset(dir string) (*Dataset, error) {
	ds := &Dataset{Dir: dir}
	var err error
	if ds.Train, err = LoadSplit(dir, "train"); err != nil {
		return nil, err
	}
	if ds.Test, err = LoadSplit(dir, "test"); err != nil {
		return nil, err
	}
	return ds, nil
}

// LoadSplit reads the label file of one split of dir (name train or
// test), and notes its item list when there is one. A tuning cell reads
// the training split alone: no test file is opened.
func LoadSplit(dir, name string) (Split, error) {
	path := ""
	for _, ext := range []string{".npy", ".txt"} {
		if p := filepath.Join(dir, name+"_labels"+ext); fileExists(p) {
			path = p
			break
		}
	}
	if path == "" {
		return Split{}, fmt.Errorf("data set %s: no %s_labels.npy (or .txt): a command cell's data set holds a label file per split", dir, name)
	}
	ids, names, err := arrays.LoadLabels(path)
	if err != nil {
		return Split{}, err
	}
	s := Split{Labels: ids, ClassNames: names}
	if p := filepath.Join(dir, name+"_items.txt"); fileExists(p) {
		s.Items = p
	}
	return s, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// RowsOfClasses returns the rows whose label is in classes (ascending), and
// the others.
func RowsOfClasses(labels []int32, classes []int) (in, out []int) {
	for i, y := range labels {
		if slices.Contains(classes, int(y)) {
			in = append(in, i)
		} else {
			out = append(out, i)
		}
	}
	return in, out
}

// WriteRows writes rows as a 1-D int64 .npy file, atomically.
func WriteRows(path string, rows []int) error {
	dict := fmt.Sprintf("{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }", len(rows))
	// magic, version 1.0, header length; the header is padded to a multiple of 64 bytes.
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	header := dict + string(bytes.Repeat([]byte{' '}, pad)) + "\n"
	return atomicfile.WriteFile(path, func(w io.Writer) error {
		var b bytes.Buffer
		b.WriteString("\x93NUMPY\x01\x00")
		_ = binary.Write(&b, binary.LittleEndian, uint16(len(header)))
		b.WriteString(header)
		for _, r := range rows {
			_ = binary.Write(&b, binary.LittleEndian, int64(r))
		}
		_, err := w.Write(b.Bytes())
		return err
	})
}
