package regularizers

import (
	"fmt"
	"math/rand"

	"github.com/dmlbench/dmlbench/trainers/losses"
)

// View is one batch scored by the loss: embeddings E' (B×D row-major, D the
// input dimension), their labels, and the weight of its loss in the total.
type View struct {
	Emb    []float32
	Labels []int
	B      int
	Weight float64
}

// Augmenter maps the batch embeddings (E, y) to one or more views before the
// loss, and the loss gradients w.r.t. the views back to dL/dE.
type Augmenter interface {
	Name() string
	// Augment draws this step's random choices from rng, updates the
	// augmenter's memory with (E, y) where it has one, and returns the views.
	// The views stay valid until the next Augment.
	Augment(emb []float32, labels []int, B, D int, rng *rand.Rand) ([]View, error)
	// Backward writes dL/dE (B·D) into grad, given viewGrads[k] = w_k ·
	// dloss/dE'_k for the views of the last Augment (weights already applied).
	Backward(viewGrads [][]float32, grad []float32)
}

// Stateful is implemented by augmenters with memory across steps (DAS): the
// trainer saves State in its checkpoint and restores it on resume.
type Stateful interface {
	State() ([]byte, error)
	SetState([]byte) error
}

// Apply computes L = Σ_k w_k·loss(view_k) for the views of a.Augment(b) and
// writes dL/dE into grad (len b.B·b.D) and Σ_k w_k·dloss_k/dθ into the Grad
// of every loss Param. b.Rng is the loss's (mining) random source; rng is
// the augmenter's.
func Apply(l losses.Loss, a Augmenter, b losses.Batch, rng *rand.Rand, grad []float32) (float64, error) {
	views, err := a.Augment(b.Emb, b.Labels, b.B, b.D, rng)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", a.Name(), err)
	}
	params := l.Params()
	acc := make([][]float64, len(params))
	for i, p := range params {
		acc[i] = make([]float64, len(p.Grad))
	}
	vg := make([][]float32, len(views))
	var total float64
	for k, v := range views {
		vg[k] = make([]float32, v.B*b.D)
		lv, err := l.Forward(losses.Batch{Emb: v.Emb, Labels: v.Labels, B: v.B, D: b.D, Rng: b.Rng}, vg[k])
		if err != nil {
			return 0, err
		}
		total += v.Weight * lv
		if v.Weight != 1 {
			w := float32(v.Weight)
			for j := range vg[k] {
				vg[k][j] *= w
			}
		}
		for i, p := range params {
			for j, g := range p.Grad {
				acc[i][j] += v.Weight * float64(g)
			}
		}
	}
	for i, p := range params {
		for j := range p.Grad {
			p.Grad[j] = float32(acc[i][j])
		}
	}
	clear(grad)
	a.Backward(vg, grad)
	return total, nil
}
