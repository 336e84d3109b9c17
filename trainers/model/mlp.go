package model

import (
	"fmt"
	"math"
	"math/rand"
)

func init() {
	register(Info{
		Name:    "mlp",
		Summary: "MLP head: [Linear → (LayerNorm) → ReLU]×len(hidden) → Linear(embed_dim) → (L2 norm)",
		New:     func(c Config) (Model, error) { return NewMLP(c) },
	})
}

// layerNormEps is ε in LayerNorm y = (z−μ)/√(σ²+ε)·γ + β (Ba et al. 2016).
const layerNormEps = 1e-5

// l2Eps is ε in the L2 normalisation e = z/√(Σz²+ε).
const l2Eps = 1e-12

// MLP is a multilayer perceptron embedding head:
//
//	h₀ = x,  hₗ = ReLU(Norm(hₗ₋₁Wₗ + bₗ)) for each hidden width,
//	z = h_L W_out + b_out,  E = z/‖z‖₂ if L2Normalize else z,
//
// Norm is the identity or LayerNorm (per row: (z−μ)/√(σ²+ε)·γ+β).
// Weights use He-uniform initialisation U(±√(6/fan_in)) for ReLU layers and
// U(±1/√fan_in) for the output layer (PyTorch's nn.Linear default); biases,
// β = 0 and γ = 1. All draws come from rand.New(rand.NewSource(Seed)).
type MLP struct{ net }

// NewMLP builds the MLP for c (defaults filled).
func NewMLP(c Config) (*MLP, error) {
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := &MLP{net: newNet(c)}
	rng := rand.New(rand.NewSource(c.Seed))
	in := c.InDim
	for l, width := range c.Hidden {
		w := m.newParam(fmt.Sprintf("mlp.%d.weight", l), []int{in, width}, false)
		uniformFill(rng, w.Data, math.Sqrt(6/float64(in)))
		b := m.newParam(fmt.Sprintf("mlp.%d.bias", l), []int{1, width}, true)
		m.add(newDense(w, b), width)
		if c.Norm == "layer" {
			gamma := m.newParam(fmt.Sprintf("mlp.%d.ln_gamma", l), []int{1, width}, true)
			for i := range gamma.Data {
				gamma.Data[i] = 1
			}
			beta := m.newParam(fmt.Sprintf("mlp.%d.ln_beta", l), []int{1, width}, true)
			m.add(newLayerNorm(gamma, beta, layerNormEps, c.Chunk), width)
		}
		m.add(reluLayer{}, width)
		in = width
	}
	m.output(in, rng)
	return m, nil
}

// Name implements Model.
func (m *MLP) Name() string { return "mlp" }

// Config returns the configuration with defaults filled.
func (m *MLP) Config() Config { return m.cfg }
