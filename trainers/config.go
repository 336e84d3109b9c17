package trainers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// Config is the full configuration of a training run. Its YAML/JSON keys are
// the `dmlbench run` flag names, so a --config file and flags share one
// vocabulary.
type Config struct {
	Dataset  string             `json:"dataset" yaml:"dataset"`
	Size     int                `json:"size,omitempty" yaml:"size"`           // image side (0 = the data set's default)
	DataPath string             `json:"data-path,omitempty" yaml:"data-path"` // data location override
	DataSeed int64              `json:"data-seed,omitempty" yaml:"data-seed"` // seed of synthetic data sets (fixed across training seeds)
	Loss     string             `json:"loss" yaml:"loss"`
	Miner    string             `json:"miner,omitempty" yaml:"miner"`
	Sampler  string             `json:"sampler" yaml:"sampler"`
	Hyper    map[string]float64 `json:"hyper,omitempty" yaml:"hyper"` // loss hyper-parameter overrides
	// Teacher is the run directory of the teacher of a teacher-student
	// loss (mpn-distill: a finished mpn-ce run on the same data).
	Teacher string `json:"teacher,omitempty" yaml:"teacher"`

	Epochs        int     `json:"epochs" yaml:"epochs"`
	ItersPerEpoch int     `json:"iters-per-epoch" yaml:"iters-per-epoch"` // 0 = ⌈N_train / batch⌉
	BatchSize     int     `json:"batch-size" yaml:"batch-size"`
	LR            float64 `json:"lr" yaml:"lr"`
	WeightDecay   float64 `json:"weight-decay" yaml:"weight-decay"`
	LRSteps       []int   `json:"lr-steps,omitempty" yaml:"lr-steps"` // epochs after which lr *= lr-gamma
	LRGamma       float64 `json:"lr-gamma" yaml:"lr-gamma"`

	Arch      string `json:"arch" yaml:"arch"`                   // mlp | cnn
	Hidden    []int  `json:"hidden" yaml:"hidden"`               // mlp hidden widths
	Channels  []int  `json:"channels,omitempty" yaml:"channels"` // cnn conv widths (default 32,64 with arch cnn)
	EmbedDim  int    `json:"embed-dim" yaml:"embed-dim"`
	Norm      string `json:"norm" yaml:"norm"`             // none | layer
	EmbedNorm string `json:"embed-norm" yaml:"embed-norm"` // l2 | none
	Chunk     int    `json:"chunk" yaml:"chunk"`           // rows per forward/backward pass; 0 = batch size

	// InChannels×InHeight×InWidth is the image shape of the input rows
	// (fixtures.Dataset.Shape), set by the caller from the data set and
	// zero for flat features; the cnn architecture needs it. It is derived
	// from dataset and size, so it is neither a config key nor hashed.
	InChannels int `json:"-" yaml:"-"`
	InHeight   int `json:"-" yaml:"-"`
	InWidth    int `json:"-" yaml:"-"`

	EvalEvery  int      `json:"eval-every" yaml:"eval-every"`
	ValSplit   float64  `json:"val-split,omitempty" yaml:"val-split"`
	SelectBy   string   `json:"select-by" yaml:"select-by"` // validation metric choosing the best epoch
	Metrics    []string `json:"metrics,omitempty" yaml:"metrics"`
	Convention string   `json:"convention" yaml:"convention"`
	Distance   string   `json:"distance" yaml:"distance"`

	Seed int64 `json:"seed" yaml:"seed"`

	// Regularisers (trainers/regularizers); zero values are off and leave
	// the config hash of runs without them unchanged.
	RhoReg     float64                 `json:"rho-reg,omitempty" yaml:"rho-reg"`         // ρ-regularisation p_switch (tuple losses)
	DAS        bool                    `json:"das,omitempty" yaml:"das"`                 // densely-anchored sampling
	DASParams  *regularizers.DASParams `json:"das-params,omitempty" yaml:"das-params"`   // nil = the paper's defaults
	Mixup      bool                    `json:"mixup,omitempty" yaml:"mixup"`             // manifold mixup of embeddings
	MixupAlpha float64                 `json:"mixup-alpha,omitempty" yaml:"mixup-alpha"` // Beta(α, α); 0 = 2
}

// Defaults are the values a zero field takes (see the package comment for
// their provenance).
func Defaults() Config {
	return Config{
		Sampler: "spc-2", Epochs: 20, BatchSize: 112, LR: 1e-3, WeightDecay: 4e-4, LRGamma: 0.3,
		Arch: "mlp", Hidden: []int{512}, EmbedDim: model.DefaultEmbedDim, Norm: "layer", EmbedNorm: "l2",
		EvalEvery: 1, SelectBy: "R@1", Convention: "strict", Distance: "euclidean",
	}
}

// WithDefaults fills the zero fields of c from Defaults. Hidden: an explicit
// empty list in YAML (hidden: []) keeps a linear head.
func (c Config) WithDefaults() Config {
	d := Defaults()
	if c.Sampler == "" {
		c.Sampler = d.Sampler
	}
	if c.Epochs == 0 {
		c.Epochs = d.Epochs
	}
	if c.BatchSize == 0 {
		c.BatchSize = d.BatchSize
	}
	if c.LR == 0 {
		c.LR = d.LR
	}
	if c.LRGamma == 0 {
		c.LRGamma = d.LRGamma
	}
	if c.Arch == "" {
		c.Arch = d.Arch
	}
	if c.Hidden == nil {
		c.Hidden = d.Hidden
	}
	if c.Arch == "cnn" && len(c.Channels) == 0 {
		c.Channels = append([]int(nil), model.DefaultCNNChannels...)
	}
	if c.EmbedDim == 0 {
		c.EmbedDim = d.EmbedDim
	}
	if c.Norm == "" {
		c.Norm = d.Norm
	}
	if c.EmbedNorm == "" {
		c.EmbedNorm = d.EmbedNorm
		if info, ok := losses.Lookup(c.Loss); ok && info.Raw {
			c.EmbedNorm = "none" // the loss is defined on unnormalised embeddings
		}
	}
	if c.EvalEvery == 0 {
		c.EvalEvery = d.EvalEvery
	}
	if c.SelectBy == "" {
		c.SelectBy = d.SelectBy
	}
	if c.Convention == "" {
		c.Convention = d.Convention
	}
	if c.Distance == "" {
		c.Distance = d.Distance
	}
	if c.DAS && c.DASParams == nil {
		p := regularizers.DefaultDASParams()
		c.DASParams = &p
	}
	if c.Mixup && c.MixupAlpha == 0 {
		c.MixupAlpha = regularizers.DefaultMixupAlpha
	}
	return c
}

// Validate reports the first invalid field of a defaulted config.
func (c Config) Validate() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case c.Loss == "":
		return fmt.Errorf("config: no loss given (see `dmlbench list losses`)")
	case c.Epochs < 0:
		return fmt.Errorf("config: epochs = %d must be ≥ 0", c.Epochs)
	case c.ItersPerEpoch < 0:
		return fmt.Errorf("config: iters-per-epoch = %d must be ≥ 0", c.ItersPerEpoch)
	case c.BatchSize < 2:
		return fmt.Errorf("config: batch-size = %d must be ≥ 2", c.BatchSize)
	case bad(c.LR) || c.LR <= 0:
		return fmt.Errorf("config: lr = %v must be positive", c.LR)
	case bad(c.WeightDecay) || c.WeightDecay < 0:
		return fmt.Errorf("config: weight-decay = %v must be ≥ 0", c.WeightDecay)
	case bad(c.LRGamma) || c.LRGamma <= 0:
		return fmt.Errorf("config: lr-gamma = %v must be positive", c.LRGamma)
	case c.EmbedNorm != "l2" && c.EmbedNorm != "none":
		return fmt.Errorf("config: embed-norm %q must be l2 or none", c.EmbedNorm)
	case c.Chunk < 0:
		return fmt.Errorf("config: chunk = %d must be ≥ 0", c.Chunk)
	case len(c.Channels) > 0 && c.Arch != "cnn":
		return fmt.Errorf("config: channels %v apply to arch cnn only (arch is %s)", c.Channels, c.Arch)
	case c.EvalEvery < 0:
		return fmt.Errorf("config: eval-every = %d must be ≥ 0", c.EvalEvery)
	case bad(c.ValSplit) || c.ValSplit < 0 || c.ValSplit >= 1:
		return fmt.Errorf("config: val-split = %v must be in [0, 1)", c.ValSplit)
	}
	if err := c.validateRegularizers(); err != nil {
		return err
	}
	for _, s := range c.LRSteps {
		if s <= 0 {
			return fmt.Errorf("config: lr-steps entry %d must be positive", s)
		}
	}
	for k, v := range c.Hyper {
		if bad(v) {
			return fmt.Errorf("config: hyper-parameter %s = %v is not finite", k, v)
		}
	}
	return nil
}

// validateRegularizers checks the regulariser fields of a defaulted config.
func (c Config) validateRegularizers() error {
	switch {
	case math.IsNaN(c.RhoReg) || c.RhoReg < 0 || c.RhoReg > 1:
		return fmt.Errorf("config: rho-reg = %v must lie in [0, 1]", c.RhoReg)
	case c.DAS && c.Mixup:
		return fmt.Errorf("config: das and mixup are both embedding augmenters; use one at a time")
	case !c.DAS && c.DASParams != nil:
		return fmt.Errorf("config: das-params given without das")
	case !c.Mixup && c.MixupAlpha != 0:
		return fmt.Errorf("config: mixup-alpha given without mixup")
	case c.Mixup && (!(c.MixupAlpha > 0) || math.IsInf(c.MixupAlpha, 0)):
		return fmt.Errorf("config: mixup-alpha = %v must be positive", c.MixupAlpha)
	}
	if c.DAS {
		return c.DASParams.Validate(c.EmbedDim)
	}
	return nil
}

// ModelConfig is the model part of c for an input width.
func (c Config) ModelConfig(inDim int) model.Config {
	chunk := c.Chunk
	if chunk == 0 || chunk > c.BatchSize {
		chunk = c.BatchSize
	}
	return model.Config{
		Arch: c.Arch, InDim: inDim, Hidden: c.Hidden, EmbedDim: c.EmbedDim, Norm: c.Norm,
		InChannels: c.InChannels, InHeight: c.InHeight, InWidth: c.InWidth, Channels: c.Channels,
		L2Normalize: c.EmbedNorm == "l2", Chunk: chunk, Seed: deriveSeed(c.Seed, 0, purposeInit),
	}
}

// LoadConfigFile reads a YAML (or JSON, a YAML subset) config; unknown keys
// are errors so typos do not pass silently.
func LoadConfigFile(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, fmt.Errorf("read config %s: the file is empty (want YAML with the flag names as keys)", path)
		}
		return Config{}, fmt.Errorf("read config %s: %w", path, err)
	}
	return c, nil
}

// Hash identifies the training-relevant part of the config: a checkpoint may
// only be resumed under the same hash. Epochs, eval-every, metrics and the
// evaluation convention are left out (a run may be extended or re-scored).
func (c Config) Hash() string {
	c.Epochs, c.EvalEvery, c.Metrics, c.Convention, c.Distance = 0, 0, nil, "", ""
	b, _ := json.Marshal(c)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Purposes of the derived RNG streams.
const (
	purposeInit = iota + 1
	purposeSampler
	purposeLoss
	purposeAugment // embedding augmenters (DAS, mixup)
)

// deriveSeed mixes (seed, epoch, purpose) with SplitMix64 (Steele et al.
// 2014) so each epoch and purpose gets an independent, reproducible stream.
func deriveSeed(seed int64, epoch int, purpose int) int64 {
	z := uint64(seed) ^ uint64(epoch)*0x9E3779B97F4A7C15 ^ uint64(purpose)<<56
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return int64(z ^ (z >> 31))
}
