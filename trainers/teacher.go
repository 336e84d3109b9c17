package trainers

import (
	"fmt"

	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/model"
)

// setTeacher prepares a teacher-student loss (losses.Distiller, Seidenschwarz et al. 2021
// §3.4): it rebuilds the teacher run's backbone and loss from its run.json
// config, restores their parameters by name from its final checkpoint,
// embeds the training split with the teacher backbone, and hands both to
// the loss. A --teacher for any other loss, or a Distiller without one, is
// an error.
func (t *trainer) setTeacher() error {
	d, isD := t.loss.(losses.Distiller)
	dir := t.cfg.Teacher
	switch {
	case dir == "" && !isD:
		return nil
	case dir == "":
		return fmt.Errorf("loss %s needs a teacher: --teacher DIR, a finished mpn-ce run on the same data", t.cfg.Loss)
	case !isD:
		return fmt.Errorf("--teacher is used only by teacher-student losses (mpn-distill), not by %s", t.cfg.Loss)
	}
	tc, saved, err := loadFinishedRun(dir)
	if err != nil {
		return fmt.Errorf("teacher: %w", err)
	}
	c := t.cfg
	if tc.Dataset != c.Dataset || tc.Size != c.Size || tc.DataPath != c.DataPath || tc.DataSeed != c.DataSeed || tc.ValSplit != c.ValSplit {
		return fmt.Errorf("teacher %s was trained on other data (dataset %q size %d data-seed %d val-split %v; this run %q %d %d %v): the class ids and training rows must match",
			dir, tc.Dataset, tc.Size, tc.DataSeed, tc.ValSplit, c.Dataset, c.Size, c.DataSeed, c.ValSplit)
	}
	classes := 0
	for _, l := range t.labels {
		classes = max(classes, l+1)
	}
	tl, err := losses.New(tc.Loss, losses.Config{NumClasses: classes, Dim: tc.EmbedDim, Miner: tc.Miner, Hyper: tc.Hyper})
	if err != nil {
		return fmt.Errorf("teacher %s: %w", dir, err)
	}
	teacher, ok := tl.(losses.Teacher)
	if !ok {
		return fmt.Errorf("teacher %s was trained with %s, which has no MPN to distil (use an mpn-ce run)", dir, tc.Loss)
	}
	// Same data (checked above), so the same image shape (not in run.json).
	tc.InChannels, tc.InHeight, tc.InWidth = c.InChannels, c.InHeight, c.InWidth
	m, err := model.New(tc.ModelConfig(t.opt.Train.X.Cols))
	if err != nil {
		return fmt.Errorf("teacher %s: %w", dir, err)
	}
	defer m.Close()
	if err := copyParamsByName(dir, saved, append(m.Params(), tl.Params()...)); err != nil {
		return fmt.Errorf("teacher: %w", err)
	}
	emb, err := model.Embed(m, t.opt.Train.X)
	if err != nil {
		return fmt.Errorf("teacher %s: %w", dir, err)
	}
	return d.SetTeacher(teacher, emb.Data, emb.Rows, emb.Cols)
}
