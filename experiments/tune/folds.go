package tune

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/trainers"
)

// FoldClasses splits the class ids 0..classes−1 into k class-disjoint
// validation folds of consecutive ids: fold f holds ⌊C/k⌋ classes, one more
// for the first C mod k folds, so every class is validated exactly once
// (the class-disjoint k-fold cross-validation of Musgrave, Belongie & Lim
// 2020 §4.2, on the training classes only).
func FoldClasses(classes, k int) ([][]int, error) {
	if k < 2 {
		return nil, fmt.Errorf("folds = %d must be ≥ 2", k)
	}
	if classes < k {
		return nil, fmt.Errorf("%d training classes cannot fill %d folds", classes, k)
	}
	folds := make([][]int, k)
	c := 0
	for f := range folds {
		n := classes / k
		if f < classes%k {
			n++
		}
		for range n {
			folds[f] = append(folds[f], c)
			c++
		}
	}
	return folds, nil
}

// TrainingClasses is the part of a data set the tuning stage may read: the
// training split (its classes are split into folds) and the image shape.
// It holds no test row by construction.
type TrainingClasses struct {
	Dataset string
	Split   fixtures.Split
	Shape   []int
}

// Data gives the two class-disjoint sides of a data set. The tuning stage
// receives only the result of TrainingClasses; the final stage also reads
// TestClasses.
type Data interface {
	TrainingClasses() (TrainingClasses, error)
	TestClasses() (fixtures.Split, error)
}

// datasetData serves a loaded fixtures.Dataset.
type datasetData struct{ ds *fixtures.Dataset }

// DatasetData wraps a loaded data set as Data.
func DatasetData(ds *fixtures.Dataset) Data { return datasetData{ds} }

func (d datasetData) TrainingClasses() (TrainingClasses, error) {
	if d.ds.Train.X.Rows == 0 {
		return TrainingClasses{}, fmt.Errorf("data set %s has no training split to tune on", d.ds.Name)
	}
	return TrainingClasses{Dataset: d.ds.Name, Split: d.ds.Train, Shape: d.ds.Shape}, nil
}

func (d datasetData) TestClasses() (fixtures.Split, error) {
	if d.ds.Test.X.Rows == 0 {
		return fixtures.Split{}, errors.New("the data set has no test split")
	}
	return d.ds.Test, nil
}

// LoadData is the data set of a cell's configuration, loaded on first use.
// For a feature directory (dir:PATH) the training classes are read from
// its train files alone, so a tuning cell never opens the test files.
func LoadData(cfg trainers.Config) Data { return &lazyData{cfg: cfg} }

type lazyData struct {
	cfg trainers.Config
	ds  Data
}

func (d *lazyData) full() (Data, error) {
	if d.ds == nil {
		ds, err := fixtures.Load(d.cfg.Dataset, fixtures.Options{Size: d.cfg.Size, Path: d.cfg.DataPath, Seed: d.cfg.DataSeed})
		if err != nil {
			return nil, err
		}
		d.ds = DatasetData(ds)
	}
	return d.ds, nil
}

func (d *lazyData) TrainingClasses() (TrainingClasses, error) {
	if dir, ok := strings.CutPrefix(d.cfg.Dataset, "dir:"); ok {
		ep, lp := filepath.Join(dir, fixtures.TrainEmbFile), filepath.Join(dir, fixtures.TrainLabelsFile)
		x, err := arrays.LoadEmbeddings(ep)
		if err != nil {
			return TrainingClasses{}, fmt.Errorf("data set %s: %w (the tuning stage reads the training classes only)", d.cfg.Dataset, err)
		}
		ids, names, err := arrays.LoadLabels(lp)
		if err != nil {
			return TrainingClasses{}, err
		}
		if err := arrays.CheckPair(x, ids, ep, lp); err != nil {
			return TrainingClasses{}, err
		}
		return TrainingClasses{Dataset: d.cfg.Dataset, Split: fixtures.Split{X: x, Labels: ids, ClassNames: names}}, nil
	}
	ds, err := d.full()
	if err != nil {
		return TrainingClasses{}, err
	}
	return ds.TrainingClasses()
}

func (d *lazyData) TestClasses() (fixtures.Split, error) {
	ds, err := d.full()
	if err != nil {
		return fixtures.Split{}, err
	}
	return ds.TestClasses()
}

// FoldSplit returns fold f of k of the training classes: the validation
// split (the fold's classes) and the training split (all other training
// classes), both relabelled densely.
func FoldSplit(tc TrainingClasses, f, k int) (train, val fixtures.Split, err error) {
	folds, err := FoldClasses(tc.Split.NumClasses(), k)
	if err != nil {
		return train, val, err
	}
	if f < 0 || f >= k {
		return train, val, fmt.Errorf("fold %d outside 0..%d", f, k-1)
	}
	inVal := map[int]bool{}
	for _, c := range folds[f] {
		inVal[c] = true
	}
	var keep []int
	for c := range tc.Split.NumClasses() {
		if !inVal[c] {
			keep = append(keep, c)
		}
	}
	return fixtures.SubsetClasses(tc.Split, keep), fixtures.SubsetClasses(tc.Split, folds[f]), nil
}
