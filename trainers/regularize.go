package trainers

import (
	"fmt"

	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// setRegularizers installs the loss-side regularisers of cfg on loss:
// ρ-regularisation wraps the miner of a tuple loss (an error for losses
// without tuples).
func setRegularizers(cfg Config, loss losses.Loss) error {
	if cfg.RhoReg > 0 {
		return regularizers.Wrap(loss, cfg.RhoReg)
	}
	return nil
}

// newAugmenter builds the embedding augmenter of cfg (nil when none) for
// numClasses training classes.
func newAugmenter(cfg Config, numClasses int) (regularizers.Augmenter, error) {
	switch {
	case cfg.DAS:
		p := regularizers.DefaultDASParams()
		if cfg.DASParams != nil {
			p = *cfg.DASParams
		}
		return regularizers.NewDAS(p, numClasses, cfg.EmbedDim, cfg.EmbedNorm == "l2")
	case cfg.Mixup:
		return regularizers.NewMixup(cfg.MixupAlpha)
	}
	return nil, nil
}

// augState serialises the augmenter's memory for the checkpoint (nil when
// it has none).
func (t *trainer) augState() ([]byte, error) {
	s, ok := t.aug.(regularizers.Stateful)
	if !ok {
		return nil, nil
	}
	b, err := s.State()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s state: %w", t.aug.Name(), err)
	}
	return b, nil
}

// restoreAugState restores the augmenter's memory from a checkpoint.
func (t *trainer) restoreAugState(b []byte) error {
	s, ok := t.aug.(regularizers.Stateful)
	if !ok {
		return nil
	}
	if len(b) == 0 {
		return fmt.Errorf("resume: the checkpoint holds no state for %s", t.aug.Name())
	}
	if err := s.SetState(b); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	return nil
}
