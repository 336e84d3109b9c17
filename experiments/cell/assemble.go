package cell

import (
	"fmt"
	"path/filepath"
)

// Rows of a split that a cell assigns: Split is "train" or "test", Rows
// the row numbers into it.
type RowSet struct {
	Split string
	Rows  []int
}

// Assignment is what one command cell asks of its trainer, whichever
// command made it (a suite grid's command cell, a tuning trial's fold, a
// final-stage run): the Contract's identity and settings, the rows to
// train on, and by name the rows to embed after each of EmbedEpochs.
type Assignment struct {
	Stage, Method      string
	Trial, Fold, Folds int
	Params             map[string]any
	Seed               int64
	Epochs             int
	ScheduleEpochs     int
	Train              RowSet
	Embed              map[string]RowSet
	EmbedEpochs        []int
}

// RowsFile is the file in a cell's directory holding the rows of the set
// named name ("train", or an Embed name such as "val" or "test").
func RowsFile(name string) string { return name + "_rows.npy" }

// Assemble is the one assembler of a command cell's Contract: it writes
// every row set of a into dir (RowsFile, absolute paths in the Contract)
// and returns the Contract (Run fills Dir and Resume) for the data set ds
// in dataDir, with the item
// lists of the splits the cell reads (so a tuning cell, which reads the
// training split alone, gets no test item path), and the labels of each
// Embed set's rows, in order, which stay with dmlbench.
func Assemble(dir, dataDir string, ds Dataset, a Assignment) (Contract, map[string][]int32, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Contract{}, nil, err
	}
	splits := map[string]Split{"train": ds.Train, "test": ds.Test}
	c := Contract{
		Version: ContractVersion, Stage: a.Stage, Method: a.Method, Trial: a.Trial, Fold: a.Fold, Folds: a.Folds,
		Params: a.Params, Seed: a.Seed, Epochs: a.Epochs, ScheduleEpochs: a.ScheduleEpochs, Data: dataDir, Items: map[string]string{},
		Embed: map[string]Rows{}, EmbedEpochs: a.EmbedEpochs, Embeddings: filepath.Join(abs, EmbDir),
	}
	labels := map[string][]int32{}
	rows := func(name string, set RowSet) (Rows, error) {
		s, ok := splits[set.Split]
		if !ok {
			return Rows{}, fmt.Errorf("cell rows %q: unknown split %q (train or test)", name, set.Split)
		}
		for _, r := range set.Rows {
			if r < 0 || r >= len(s.Labels) {
				return Rows{}, fmt.Errorf("cell rows %q: row %d outside the %d rows of the %s split", name, r, len(s.Labels), set.Split)
			}
		}
		path := filepath.Join(abs, RowsFile(name))
		if err := WriteRows(path, set.Rows); err != nil {
			return Rows{}, err
		}
		if s.Items != "" {
			c.Items[set.Split] = s.Items
		}
		return Rows{Split: set.Split, Rows: path, Count: len(set.Rows)}, nil
	}
	if c.Train, err = rows("train", a.Train); err != nil {
		return Contract{}, nil, err
	}
	for name, set := range a.Embed {
		if name == "train" {
			return Contract{}, nil, fmt.Errorf("cell rows: an embedded set may not be named train (the training rows' file)")
		}
		if c.Embed[name], err = rows(name, set); err != nil {
			return Contract{}, nil, err
		}
		l := make([]int32, len(set.Rows))
		for i, r := range set.Rows {
			l[i] = splits[set.Split].Labels[r]
		}
		labels[name] = l
	}
	return c, labels, nil
}

// AllRows are the row numbers 0, …, n−1.
func AllRows(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// Epochs1To are the epochs 1, …, n.
func Epochs1To(n int) []int {
	e := make([]int, n)
	for i := range e {
		e[i] = i + 1
	}
	return e
}
