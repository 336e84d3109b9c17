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
		Name:    "cnn",
		Summary: "small CNN for images: [Conv3×3(pad 1) → ReLU → MaxPool2]×len(channels) → flatten → Linear(embed_dim) → (L2 norm)",
		New:     func(c Config) (Model, error) { return NewCNN(c) },
		Check:   checkCNN,
	})
}

// DefaultCNNChannels are the conv widths of the CNN when Config.Channels is
// empty: two blocks, 1×28×28 → 32×14×14 → 64×7×7 (3 136 features).
var DefaultCNNChannels = []int{32, 64}

// CNN is a small convolutional embedding network for images (issue 4), the
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
// independent across chunks and padding).
//
// Each convolution is Gorgonia's Conv2d decomposition (nn.go: Im2Col →
// patches·Wᵀ → reshape → transpose to channels-first) written out, so that
// the per-channel bias is added to the (B·H·W)×C_out patch product with the
// same 2-D BroadcastAdd as the MLP (Conv2d has no bias, and a 4-D broadcast
// over B×C×H×W would materialise Repeat copies). The weight of block l is
// stored as a (C_in·9)×C_out matrix with row index c·9 + ky·3 + kx (the
// Im2Col column order). ReLU is applied after the pool: max-pooling and
// ReLU commute (ReLU is monotone), and the pooled map is 4× smaller.
// MaxPool2D routes each window's gradient to its first maximum (a mask),
// unlike Gorgonia's Max, which splits it over ties.
//
// Initialisation: conv weights He-uniform U(±√(6/fan_in)) with
// fan_in = C_in·9, conv biases 0; the output layer U(±1/√fan_in) for
// weight and bias (as the MLP). All draws come from
// rand.New(rand.NewSource(Seed)), in parameter order, so the same seed gives
// the same weights and the same numbers.
type CNN struct{ pass }

// cnnDefaults fills the CNN-specific defaults of a defaulted config.
func cnnDefaults(c Config) Config {
	if len(c.Channels) == 0 {
		c.Channels = append([]int(nil), DefaultCNNChannels...)
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

// NewCNN builds and compiles the CNN for c (defaults filled).
func NewCNN(c Config) (*CNN, error) {
	c = cnnDefaults(c.WithDefaults())
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkCNN(c); err != nil {
		return nil, err
	}
	m := &CNN{pass: newPass(c)}
	rng := rand.New(rand.NewSource(c.Seed))
	if err := m.build(rng); err != nil {
		m.Close()
		return nil, fmt.Errorf("model: build CNN: %w", err)
	}
	return m, nil
}

// convBlock is MaxPool2×2(ReLU(Conv3×3(h) + b)) on h (B×cin×H×W), computed
// as ReLU(MaxPool(…)) (see the type comment).
func convBlock(h, w, b *G.Node, B, cin, cout, H, W int) (*G.Node, error) {
	one := tensor.Shape{1, 1}
	col, err := G.Im2Col(h, tensor.Shape{3, 3}, one, one, one) // B×H×W×(cin·9)
	if err != nil {
		return nil, err
	}
	if col, err = G.Reshape(col, tensor.Shape{B * H * W, cin * 9}); err != nil {
		return nil, err
	}
	z, err := linear(col, w, b) // (B·H·W)×cout
	if err != nil {
		return nil, err
	}
	if z, err = G.Reshape(z, tensor.Shape{B, H, W, cout}); err != nil {
		return nil, err
	}
	if z, err = G.Transpose(z, 0, 3, 1, 2); err != nil { // B×cout×H×W
		return nil, err
	}
	p, err := G.MaxPool2D(z, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2})
	if err != nil {
		return nil, err
	}
	return G.Rectify(p)
}

func (m *CNN) build(rng *rand.Rand) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia: %v", r)
		}
	}()
	c := m.cfg
	B := c.Chunk
	x := m.input()

	cin, H, W := c.InChannels, c.InHeight, c.InWidth
	h, err := G.Reshape(x, tensor.Shape{B, cin, H, W})
	if err != nil {
		return err
	}
	for l, cout := range c.Channels {
		wp, w := m.newParam(fmt.Sprintf("cnn.%d.weight", l), []int{cin * 9, cout}, false)
		uniformFill(rng, wp.Data, math.Sqrt(6/float64(cin*9)))
		_, b := m.newParam(fmt.Sprintf("cnn.%d.bias", l), []int{1, cout}, true)
		if h, err = convBlock(h, w, b, B, cin, cout, H, W); err != nil {
			return fmt.Errorf("block %d: %w", l+1, err)
		}
		cin, H, W = cout, H/2, W/2
	}
	flat := cin * H * W
	if h, err = G.Reshape(h, tensor.Shape{B, flat}); err != nil {
		return err
	}
	return m.output(h, flat, rng)
}

// Name implements Model.
func (m *CNN) Name() string { return "cnn" }

// Config returns the configuration with defaults (and Channels) filled.
func (m *CNN) Config() Config { return m.cfg }
