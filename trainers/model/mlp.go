package model

import (
	"fmt"
	"math"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
type MLP struct{ pass }

// NewMLP builds and compiles the MLP for c (defaults filled).
func NewMLP(c Config) (*MLP, error) {
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := &MLP{pass: newPass(c)}
	rng := rand.New(rand.NewSource(c.Seed))
	if err := m.build(rng); err != nil {
		return nil, fmt.Errorf("model: build MLP: %w", err)
	}
	return m, nil
}

func (m *MLP) build(rng *rand.Rand) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia: %v", r)
		}
	}()
	c := m.cfg
	B := c.Chunk
	x := m.input()

	h := x
	in := c.InDim
	for l, width := range c.Hidden {
		wp, w := m.newParam(fmt.Sprintf("mlp.%d.weight", l), []int{in, width}, false)
		uniformFill(rng, wp.Data, math.Sqrt(6/float64(in)))
		_, b := m.newParam(fmt.Sprintf("mlp.%d.bias", l), []int{1, width}, true)
		z, err := linear(h, w, b)
		if err != nil {
			return err
		}
		if c.Norm == "layer" {
			gp, gamma := m.newParam(fmt.Sprintf("mlp.%d.ln_gamma", l), []int{1, width}, true)
			for i := range gp.Data {
				gp.Data[i] = 1
			}
			_, beta := m.newParam(fmt.Sprintf("mlp.%d.ln_beta", l), []int{1, width}, true)
			if z, err = layerNorm(z, gamma, beta, B); err != nil {
				return err
			}
		}
		if h, err = relu(z); err != nil {
			return err
		}
		in = width
	}
	return m.output(h, in, rng)
}

// linear is hW + b with b (1×out) broadcast along rows.
func linear(h, w, b *G.Node) (*G.Node, error) {
	hw, err := G.Mul(h, w)
	if err != nil {
		return nil, err
	}
	s := hw.Shape()
	return G.ApplyOp(biasAddOp{rows: s[0], cols: s[1]}, hw, b)
}

// layerNorm normalises each row of z (B×H): (z−μ)/√(σ²+ε)·γ + β
// (layerNormOp).
func layerNorm(z, gamma, beta *G.Node, B int) (*G.Node, error) {
	return G.ApplyOp(layerNormOp{rows: B, cols: z.Shape()[1], eps: float32(layerNormEps)}, z, gamma, beta)
}

// l2Normalize divides each row of e (B×D) by √(Σe²+ε).
func l2Normalize(e *G.Node, B int) (*G.Node, error) {
	sq, err := G.Square(e)
	if err != nil {
		return nil, err
	}
	ss, err := G.Sum(sq, 1)
	if err != nil {
		return nil, err
	}
	if ss, err = G.Add(ss, G.NewConstant(float32(l2Eps))); err != nil {
		return nil, err
	}
	n, err := G.Sqrt(ss)
	if err != nil {
		return nil, err
	}
	if n, err = G.Reshape(n, tensor.Shape{B, 1}); err != nil {
		return nil, err
	}
	return G.BroadcastHadamardDiv(e, n, nil, []byte{1})
}

// Name implements Model.
func (m *MLP) Name() string { return "mlp" }

// Config returns the configuration with defaults filled.
func (m *MLP) Config() Config { return m.cfg }
