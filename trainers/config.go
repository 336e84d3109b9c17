package trainers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// Config is the full configuration of a training run: every setting of
// `dmlbench run` is a field here, so the config hash, the YAML file, run.json
// and --resume all see the same settings.
//
// Tags: `json`/`yaml` give the key, which is also the flag name unless a
// `flag` tag renames it ("-" = no flag); `usage` is the flag's help. The
// default of every flag is the field's value in Defaults, the one source of
// defaults: a --config file and the command line both start from Defaults,
// so a key or flag that is not given takes the default and an explicit 0
// stays 0 (and is then valid or a Validate error).
//
// A config reaches training by one path: parse (Defaults, then a --config
// file, then flags; or WithDefaults for a partial Config built in Go), then
// Resolve, which fills the settings whose default depends on another one
// (embed-norm on the loss, channels on the arch, das-params, mixup-alpha)
// and validates the result once. RunExperiment and Train take the resolved
// config as it is and neither default nor validate it again; its fields
// are read-only from then on (only the data's image shape is set later).
//
// Threads are deliberately not a setting: results are identical for any
// thread count (every parallel reduction has a fixed order), so the count
// is left to the host (GOMAXPROCS) and recorded nowhere.
type Config struct {
	Dataset  string             `json:"dataset" yaml:"dataset" usage:"data set (see dmlbench list datasets; dir:PATH for feature files)"`
	Size     int                `json:"size,omitempty" yaml:"size" usage:"image side after downsampling (0 = the data set's own)"`
	DataPath string             `json:"data-path,omitempty" yaml:"data-path" usage:"data location override (emoji .npz, fashion-mnist directory)"`
	DataSeed int64              `json:"data-seed,omitempty" yaml:"data-seed" usage:"seed of synthetic data sets (kept fixed while --seed varies)"`
	Loss     string             `json:"loss" yaml:"loss" usage:"loss (required; see dmlbench list losses)"`
	Miner    string             `json:"miner,omitempty" yaml:"miner" usage:"tuple miner for tuple losses (see dmlbench list miners; empty = none)"`
	Sampler  string             `json:"sampler" yaml:"sampler" usage:"batch sampler (see dmlbench list samplers)"`
	Hyper    map[string]float64 "json:\"hyper,omitempty\" yaml:\"hyper\" usage:\"loss hyper-parameters `k=v,k=v` (see dmlbench list losses)\""
	// Teacher is the run directory of the teacher of a teacher-student
	// loss (mpn-distill: a finished mpn-ce run on the same data).
	Teacher string "json:\"teacher,omitempty\" yaml:\"teacher\" usage:\"teacher run `DIR` of a teacher-student loss (mpn-distill): a finished mpn-ce run on the same data\""

	Epochs        int     `json:"epochs" yaml:"epochs" usage:"training epochs (0 = evaluate the untrained model only)"`
	ItersPerEpoch int     `json:"iters-per-epoch" yaml:"iters-per-epoch" usage:"steps per epoch (0 = ⌈N_train / batch⌉)"`
	BatchSize     int     `json:"batch-size" yaml:"batch-size" usage:"batch size (at most the number of training rows)"`
	LR            float64 `json:"lr" yaml:"lr" usage:"Adam learning rate (loss parameters may set their own)"`
	WeightDecay   float64 `json:"weight-decay" yaml:"weight-decay" usage:"L2 weight decay (coupled, as torch Adam; 0 = none)"`
	LRSteps       []int   `json:"lr-steps,omitempty" yaml:"lr-steps" usage:"epochs after which the learning rate is multiplied by --lr-gamma, e.g. 10,15"`
	LRGamma       float64 `json:"lr-gamma" yaml:"lr-gamma" usage:"step-decay factor"`

	Arch      string `json:"arch" yaml:"arch" usage:"model architecture: mlp | cnn (image data sets only; see dmlbench list archs)"`
	Hidden    []int  `json:"hidden" yaml:"hidden" usage:"mlp hidden widths, e.g. 512,512 (none = linear head)"`
	Channels  []int  `json:"channels,omitempty" yaml:"channels" usage:"cnn conv-block widths, e.g. 32,64 (the default with --arch cnn) or 32,64,128 for a third block"`
	EmbedDim  int    `json:"embed-dim" yaml:"embed-dim" usage:"embedding dimension"`
	Norm      string `json:"norm" yaml:"norm" usage:"hidden-layer normalisation: layer | none"`
	EmbedNorm string `json:"embed-norm" yaml:"embed-norm" usage:"embedding normalisation: l2 | none (empty = l2, or none for losses on raw embeddings: npair, lifted, genlifted, prototypical)"`
	Chunk     int    `json:"chunk" yaml:"chunk" usage:"rows per forward/backward pass (multistage back-propagation; 0 = the batch)"`

	// InChannels×InHeight×InWidth is the image shape of the input rows
	// (fixtures.Dataset.Shape), set by the caller from the data set and
	// zero for flat features; the cnn architecture needs it. It is derived
	// from dataset and size, so it is neither a config key nor hashed.
	InChannels int `json:"-" yaml:"-"`
	InHeight   int `json:"-" yaml:"-"`
	InWidth    int `json:"-" yaml:"-"`

	EvalEvery  int      `json:"eval-every" yaml:"eval-every" usage:"evaluate every N ≥ 1 epochs (the last epoch always)"`
	ValSplit   float64  `json:"val-split,omitempty" yaml:"val-split" usage:"fraction of training classes held out for best-epoch selection"`
	SelectBy   string   `json:"select-by" yaml:"select-by" usage:"validation metric that picks the best epoch"`
	Metrics    []string `json:"metrics,omitempty" yaml:"metrics" usage:"comma-separated metrics (empty = all; see dmlbench list metrics)"`
	Convention string   `json:"convention" yaml:"convention" flag:"compat" usage:"metric convention: strict | roth | pml | pml3"`
	Distance   string   `json:"distance" yaml:"distance" usage:"evaluation distance: euclidean | cosine | ip"`
	// Backend is the k-NN backend of the evaluations; with faiss, k-means
	// for NMI/F1 is faiss's too (the convention's preset).
	Backend string `json:"backend,omitempty" yaml:"backend" usage:"k-NN backend for evaluation (see dmlbench list backends)"`

	Seed int64 `json:"seed" yaml:"seed" usage:"seed of initialisation, batches, mining"`

	// Regularisers (trainers/regularizers); zero values are off and leave
	// the config hash of runs without them unchanged.
	RhoReg     float64                 "json:\"rho-reg,omitempty\" yaml:\"rho-reg\" usage:\"ρ-regularisation: switch a mined negative for a positive with probability `P` (tuple losses; Roth et al. 2020 §5; e.g. 0.2)\""
	DAS        bool                    `json:"das,omitempty" yaml:"das" usage:"densely-anchored sampling: add T DFS+MTS embeddings per anchor (Liu et al. 2022 §3)"`
	DASParams  *regularizers.DASParams "json:\"das-params,omitempty\" yaml:\"das-params\" usage:\"DAS `T,K,Z,rs,rb` or k=v pairs (empty = 3,4,10,0.01,0.01)\""
	Mixup      bool                    `json:"mixup,omitempty" yaml:"mixup" usage:"manifold mixup of embeddings, loss weighted per label entry (Roth et al. 2020 §H eq. 31)"`
	MixupAlpha float64                 "json:\"mixup-alpha,omitempty\" yaml:\"mixup-alpha\" usage:\"mixup interpolation λ ~ Beta(`α`, α) (0 = 2)\""

	// Test-time refinement of the final test embeddings by the trained
	// loss's message-passing network (Seidenschwarz et al. 2021 §3;
	// trainers/testtime), scored into run.json final_refined. It runs after
	// training, so it is not hashed: a finished run may be re-scored.
	TestTime        string `json:"test-time,omitempty" yaml:"test-time" usage:"after training, also score the test split refined by the loss's MPN in batches built per sample: none | knn | reciprocal | cluster (Seidenschwarz et al. 2021 §3; loss mpn-ce) into run.json final_refined"`
	TestTimeK       int    `json:"test-time-k,omitempty" yaml:"test-time-k" usage:"k of the reciprocal k-NN sets, or the chunk size of knn/cluster batches"`
	TestTimeKR      int    `json:"test-time-kr,omitempty" yaml:"test-time-kr" usage:"reciprocal batch size k_r (0 = 2k)"`
	TestTimeN       int    `json:"test-time-n,omitempty" yaml:"test-time-n" usage:"chunks per knn/cluster batch"`
	TestTimeCluster string `json:"test-time-cluster,omitempty" yaml:"test-time-cluster" usage:"clustering of --test-time cluster (empty = kmeans into N/k clusters; see eval --clustering)"`

	// SaveEmbeddings also writes the final test embeddings and labels as
	// DIR/test_emb.npy and DIR/test_labels.npy; not hashed.
	SaveEmbeddings bool `json:"save-embeddings,omitempty" yaml:"save-embeddings" usage:"also write the final test embeddings as DIR/test_emb.npy and DIR/test_labels.npy (for eval, plot tsne, --clustering)"`

	// resolved marks a config returned by Resolve.
	resolved bool
}

// Defaults is the one source of default settings: the flags of `dmlbench
// run` show these values and a run that does not give a setting gets
// exactly this value (see the package comment for their provenance).
func Defaults() Config {
	return Config{
		Dataset: "omniglot", Sampler: "spc-2", Epochs: 20, BatchSize: 112, LR: 1e-3, WeightDecay: 4e-4, LRGamma: 0.3,
		Arch: "mlp", Hidden: []int{512}, EmbedDim: model.DefaultEmbedDim, Norm: "layer",
		EvalEvery: 1, SelectBy: "R@1", Convention: "strict", Distance: "euclidean", Backend: "exact", TestTime: "none",
		TestTimeK: 10, TestTimeN: 8,
	}
}

// zeroKept are the settings whose zero WithDefaults keeps: there it is a
// valid value (no training, only the untrained model's evaluation; no
// weight decay) or there is no sensible default (the data set).
var zeroKept = map[string]bool{"Epochs": true, "WeightDecay": true, "Dataset": true}

// WithDefaults fills the zero fields of a partial c (a Config literal built
// in Go) with their value in Defaults, except zeroKept (a literal that wants
// their defaults says so), and the settings whose default depends on
// another one (derive). Hidden: an explicit empty list (hidden: []) keeps a
// linear head; only a nil one takes the default.
func (c Config) WithDefaults() Config {
	return c.fill(true)
}

// fill sets the zero fields of c, except zeroKept, to their value in
// Defaults (numbers only when numbers is set), then derives the dependent
// settings.
func (c Config) fill(numbers bool) Config {
	d := reflect.ValueOf(Defaults())
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		sf, f := v.Type().Field(i), v.Field(i)
		if !sf.IsExported() || !f.IsZero() || zeroKept[sf.Name] {
			continue
		}
		switch f.Kind() {
		case reflect.Int, reflect.Int64, reflect.Float64:
			if !numbers {
				continue
			}
		}
		f.Set(d.Field(i))
	}
	return c.derive()
}

// derive fills the settings whose default depends on another one: channels
// on the arch, embed-norm on the loss, das-params on das, mixup-alpha on
// mixup.
func (c Config) derive() Config {
	if c.Arch == "cnn" && len(c.Channels) == 0 {
		c.Channels = model.DefaultCNNChannels()
	}
	if c.EmbedNorm == "" {
		c.EmbedNorm = "l2"
		if info, ok := losses.Lookup(c.Loss); ok && info.Raw {
			c.EmbedNorm = "none" // the loss is defined on unnormalised embeddings
		}
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

// Resolve is the edge between a parsed config and a run: it gives an empty
// name or list its default (an empty sampler is spc-2), fills the settings
// whose default depends on another one, and validates the result, once.
// A zero number is kept and validated, so an explicit --lr 0 is an error,
// not a silent default. The error is a *ConfigError.
func (c Config) Resolve() (Config, error) {
	if c.resolved {
		return c, nil
	}
	c = c.fill(false)
	if err := c.Validate(); err != nil {
		return Config{}, &ConfigError{err}
	}
	c.resolved = true
	return c, nil
}

// ready is the config a library entry point runs: c itself when Resolve
// made it, otherwise a partial Go literal completed by WithDefaults and
// resolved.
func (c Config) ready() (Config, error) {
	if c.resolved {
		return c, nil
	}
	return c.WithDefaults().Resolve()
}

// Validate reports the first invalid field of a complete config (one built
// on Defaults, as the command line and --config files are, or completed by
// WithDefaults); Resolve calls it. Settings whose zero means "derived" (embed-norm,
// backend, test-time, chunk, iters-per-epoch) may be empty; the others must
// hold a usable value, so an explicit --lr 0 or --batch-size 0 is an error
// rather than a silent default.
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
	case c.EmbedDim < 1:
		return fmt.Errorf("config: embed-dim = %d must be ≥ 1", c.EmbedDim)
	case c.EmbedNorm != "" && c.EmbedNorm != "l2" && c.EmbedNorm != "none":
		return fmt.Errorf("config: embed-norm %q must be l2 or none", c.EmbedNorm)
	case c.Chunk < 0:
		return fmt.Errorf("config: chunk = %d must be ≥ 0", c.Chunk)
	case c.Size < 0:
		return fmt.Errorf("config: size = %d must be ≥ 0", c.Size)
	case len(c.Channels) > 0 && c.Arch != "cnn":
		return fmt.Errorf("config: channels %v apply to arch cnn only (arch is %s)", c.Channels, c.Arch)
	case c.EvalEvery < 1:
		return fmt.Errorf("config: eval-every = %d must be ≥ 1", c.EvalEvery)
	case bad(c.ValSplit) || c.ValSplit < 0 || c.ValSplit >= 1:
		return fmt.Errorf("config: val-split = %v must be in [0, 1)", c.ValSplit)
	case c.TestTimeK < 1 || c.TestTimeN < 1:
		return fmt.Errorf("config: test-time-k = %d and test-time-n = %d must be ≥ 1", c.TestTimeK, c.TestTimeN)
	case c.TestTimeKR < 0:
		return fmt.Errorf("config: test-time-kr = %d must be ≥ 0 (0 = 2k)", c.TestTimeKR)
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("config: hidden width %d must be ≥ 1", h)
		}
	}
	for _, w := range c.Channels {
		if w < 1 {
			return fmt.Errorf("config: channel width %d must be ≥ 1", w)
		}
	}
	if err := c.validateRegularizers(); err != nil {
		return err
	}
	if err := c.checkNames(); err != nil {
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

// validateRegularizers checks the regulariser fields; unset das-params and
// mixup-alpha take their defaults in WithDefaults.
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
	case c.Mixup && (math.IsNaN(c.MixupAlpha) || c.MixupAlpha < 0 || math.IsInf(c.MixupAlpha, 0)):
		return fmt.Errorf("config: mixup-alpha = %v must be positive (0 = the default 2)", c.MixupAlpha)
	}
	if c.DAS && c.DASParams != nil { // nil = the defaults (WithDefaults)
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

// LoadConfigFile reads a YAML (or JSON, a YAML subset) config over
// Defaults: keys not in the file keep their default, and a key given as 0
// stays 0. It also returns the keys the file gives. An unknown key is a
// one-line error with its line and the key it probably means, so typos do
// not pass silently.
func LoadConfigFile(path string) (Config, map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return Config{}, nil, fmt.Errorf("read config %s: %s", path, yamlLine(err))
	}
	if len(doc.Content) == 0 {
		return Config{}, nil, fmt.Errorf("read config %s: the file is empty (want YAML with the flag names as keys)", path)
	}
	top := doc.Content[0]
	if err := checkConfigKeys(top, reflect.TypeFor[Config](), ""); err != nil {
		return Config{}, nil, fmt.Errorf("read config %s: %w", path, err)
	}
	c := Defaults()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return Config{}, nil, fmt.Errorf("read config %s: %s", path, yamlLine(err))
	}
	given := map[string]bool{}
	for i := 0; i < len(top.Content); i += 2 {
		given[top.Content[i].Value] = true
	}
	return c, given, nil
}

// keyAliases maps names other tools give a setting (normalised by
// suggest.Key: lower case, '-' for '_') to its key.
var keyAliases = map[string]string{
	"learning-rate": "lr", "compat": "convention", "embedding-size": "embed-dim", "embedding-dim": "embed-dim",
	"num-epochs": "epochs", "n-epochs": "epochs", "milestones": "lr-steps", "gamma": "lr-gamma", "sampling": "sampler",
	"loss-fn": "loss", "mining": "miner", "hidden-dims": "hidden", "dim": "embed-dim",
}

// checkConfigKeys refuses a key of the mapping n that type t (Config, or
// the struct of a nested setting such as das-params) does not have, naming
// its line and the key (and, for Config, the flag) it probably means.
func checkConfigKeys(n *yaml.Node, t reflect.Type, where string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %swant a mapping of keys (key: value)", n.Line, where)
	}
	var known []string
	fields := map[string]Setting{}
	for _, s := range SettingsOf(t) {
		known, fields[s.Key] = append(known, s.Key), s
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		if !ok {
			return unknownConfigKey(k, known, fields, where)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && v.Kind == yaml.MappingNode {
			if err := checkConfigKeys(v, ft, k.Value+": "); err != nil {
				return err
			}
		}
	}
	return nil
}

// unknownConfigKey is the one-line error of the unknown key k.
func unknownConfigKey(k *yaml.Node, known []string, fields map[string]Setting, where string) error {
	near := suggest.Key(k.Value, known, keyAliases)
	if where != "" { // a nested setting: its keys are not flags
		if near == "" {
			return fmt.Errorf("line %d: %sunknown key %q (known: %s)", k.Line, where, k.Value, strings.Join(known, ", "))
		}
		return fmt.Errorf("line %d: %sunknown key %q; did you mean %s?", k.Line, where, k.Value, near)
	}
	if near == "" {
		return fmt.Errorf("line %d: unknown key %q (the keys are the flag names of dmlbench run --help; convention for --compat)", k.Line, k.Value)
	}
	return fmt.Errorf("line %d: unknown key %q; did you mean %s (--%s)?", k.Line, k.Value, near, fields[near].Flag)
}

// yamlLine is a YAML error on one line, without the decoder's prefixes.
func yamlLine(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors: ")
	return strings.TrimPrefix(msg, "yaml: ")
}

// Hash identifies the training-relevant part of the config: a checkpoint may
// only be resumed under the same hash. Epochs, eval-every, metrics and the
// evaluation convention are left out (a run may be extended or re-scored).
//
// The evaluation backend, the test-time refinement and save-embeddings act
// after training or only on evaluation, so they are left out too; being
// zeroed here, they leave the hash of runs recorded before they became
// config keys unchanged.
func (c Config) Hash() string {
	c.Epochs, c.EvalEvery, c.Metrics, c.Convention, c.Distance = 0, 0, nil, "", ""
	c.Backend, c.SaveEmbeddings = "", false
	c.TestTime, c.TestTimeK, c.TestTimeKR, c.TestTimeN, c.TestTimeCluster = "", 0, 0, 0, ""
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
	// purposeLossInit seeds the loss's own parameters (proxies, MPN): the
	// initial model and loss are the epoch-0 streams of purposeInit and
	// purposeLossInit; every other stream is per epoch (epochRNG).
	purposeLossInit = purposeInit + 16
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
