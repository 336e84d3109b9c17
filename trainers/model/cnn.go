package model

import (
	"fmt"
	"math"
	"math/rand"
)

func init() {
	register(Info{
		Name:    "cnn",
		Summary: "small CNN for images: [Conv3×3(pad 1) → ReLU → MaxPool2]×len(channels) → flatten → Linear(embed_dim) → (L2 norm)",
		New:     func(c Config) (Model, error) { return NewCNN(c) },
		Check:   checkCNN,
	})
}

// DefaultCNNChannels returns the conv widths of the CNN when
// Config.Channels is empty: two blocks, 1×28×28 → 32×14×14 → 64×7×7
// (3 136 features). Each call returns a new slice.
func DefaultCNNChannels() []int { return []int{32, 64} }

// CNN is a small convolutional embedding network for images, the
// classic few-shot/Omniglot backbone shape (Koch et al. 2015; Snell et al.
// 2017 use four such blocks at 64 channels):
//
//	h₀ = x reshaped to B×C×H×W (channels-first, as fixtures.Dataset.Shape),
//	hₗ = MaxPool2×2(ReLU(Conv3×3(hₗ₋₁; Wₗ, bₗ))) for each width in Channels,
//	z = flatten(h_L) W_out + b_out,  E = z/‖z‖₂ if L2Normalize else z.
//
// Convolutions have stride 1 and zero padding 1, so only the pools shrink
// the map: H → ⌊H/2⌋ per block (28 → 14 → 7 → 3). Why this shape: on
// 28×28 strokes a pixel MLP must learn translation invariance from the data,
// while two or three conv blocks share weights across positions and pool
// away small shifts with a few tens of thousands of parameters; no
// BatchNorm, for the reason given in the package comment (rows must stay
// independent across chunks).
//
// Each convolution is one GEMM with the weight (the project's Sgemm,
// internal/blas32) whose im2col operand is packed straight from the input
// map (no im2col matrix is stored), and the per-channel bias, the 2×2
// max-pool and ReLU are one fused step on the product (cnn_pool.go: adding
// a per-channel constant commutes with a window maximum, and ReLU, being
// monotone, with both; the pooled map is 4× smaller). Maps are
// channels-first over the whole batch between blocks (one plane per
// channel), so that the pixels a GEMM panel holds side by side are
// contiguous; the last block writes per-row channels-first for the
// flatten. The input gradient is the full convolution of the output
// gradient with the mirrored weight, one more GEMM of the same kind. The
// weight of block l is stored as a (C_in·9)×C_out matrix with row index
// c·9 + ky·3 + kx (the im2col column order). The pool routes each
// window's gradient to its first maximum (row-major window order), as
// PyTorch 1.13's max_pool2d does on CPU, rather than splitting it over ties.
//
// Initialisation: conv weights He-uniform U(±√(6/fan_in)) with
// fan_in = C_in·9, conv biases 0; the output layer U(±1/√fan_in) for
// weight and bias (as the MLP). All draws come from
// rand.New(rand.NewSource(Seed)), in parameter order, so the same seed gives
// the same weights and the same numbers.
type CNN struct{ net }

// cnnDefaults fills the CNN-specific defaults of a defaulted config.
func cnnDefaults(c Config) Config {
	if len(c.Channels) == 0 {
		c.Channels = DefaultCNNChannels()
	}
	return c
}

// checkCNN validates the input geometry and that every block keeps at least
// a 1×1 map.
func checkCNN(c Config) error {
	c = cnnDefaults(c)
	C, H, W := c.InChannels, c.InHeight, c.InWidth
	if C <= 0 || H <= 0 || W <= 0 {
		return fmt.Errorf("model: the cnn architecture needs image input (a C×H×W data set such as omniglot, fashion-mnist or emoji); this data has %d flat features and no image shape (use --arch mlp)", c.InDim)
	}
	if C*H*W != c.InDim {
		return fmt.Errorf("model: image shape %d×%d×%d has %d values but the input rows have %d", C, H, W, C*H*W, c.InDim)
	}
	for l := range c.Channels {
		if H < 2 || W < 2 {
			return fmt.Errorf("model: cnn block %d gets a %d×%d map, too small for a 2×2 pool: use fewer --channels or larger images", l+1, H, W)
		}
		H, W = H/2, W/2
	}
	return nil
}

// NewCNN builds the CNN for c (defaults filled).
func NewCNN(c Config) (*CNN, error) {
	c = cnnDefaults(c.WithDefaults())
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkCNN(c); err != nil {
		return nil, err
	}
	m := &CNN{net: newNet(c)}
	rng := rand.New(rand.NewSource(c.Seed))
	cin, H, W := c.InChannels, c.InHeight, c.InWidth
	last := len(c.Channels) - 1
	for l, cout := range c.Channels {
		w := m.newParam(fmt.Sprintf("cnn.%d.weight", l), []int{cin * 9, cout}, false)
		uniformFill(rng, w.Data, math.Sqrt(6/float64(cin*9)))
		b := m.newParam(fmt.Sprintf("cnn.%d.bias", l), []int{1, cout}, true)
		blk := newConvBlock(w, b, geom{B: c.Chunk, C: cin, H: H, W: W, nchw: l == 0}, l == last)
		m.add(blk, blk.outWidth())
		cin, H, W = cout, H/2, W/2
	}
	m.output(cin*H*W, rng)
	return m, nil
}

// Name implements Model.
func (m *CNN) Name() string { return "cnn" }

// Config returns the configuration with defaults (and Channels) filled.
func (m *CNN) Config() Config { return m.cfg }
