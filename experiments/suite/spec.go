package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// List is a YAML value that may be a scalar or a sequence of scalars.
type List []string

// UnmarshalYAML accepts `x` as well as `[x, y]`.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = List{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(List, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: list items must be scalars", c.Line)
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: want a value or a list of values", n.Line)
}

// Flags are free-form command-line arguments: a YAML list (one argument per
// item) or a string split on white space.
type Flags []string

// UnmarshalYAML accepts `--lr 1e-3 --hidden 256` and `[--lr, 1e-3]`.
func (f *Flags) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*f = strings.Fields(n.Value)
		return nil
	}
	var l List
	if err := l.UnmarshalYAML(n); err != nil {
		return err
	}
	*f = Flags(l)
	return nil
}

// Grid is one block of a suite: the Cartesian product of its lists.
type Grid struct {
	Dataset     List `yaml:"dataset"`
	Loss        List `yaml:"loss"`
	Miner       List `yaml:"miner"`
	Sampler     List `yaml:"sampler"`
	Regularizer List `yaml:"regularizer"`
	EmbedDim    List `yaml:"embed-dim"`
	BatchSize   List `yaml:"batch-size"`
	Seed        List `yaml:"seed"`
	// Epochs overrides the suite's epochs when > 0 or when EpochsSet (a
	// file that gives epochs: 0 means 0: only the untrained evaluation).
	Epochs    int   `yaml:"epochs"`
	EpochsSet bool  `yaml:"-"`
	Extra     Flags `yaml:"extra"`
	// Tag is appended to the run directory name (to tell apart grids that
	// differ only in their extra flags); a command grid's method name.
	Tag string `yaml:"tag"`
	// Command, in place of a loss, is the user's trainer (command.go,
	// docs/external.md); Params are the settings handed to it.
	Command Flags          `yaml:"command"`
	Params  map[string]any `yaml:"params"`
}

// EvalEntry scores an existing embedding file instead of training.
type EvalEntry struct {
	Name    string            `yaml:"name"`
	Dataset string            `yaml:"dataset"`
	Method  map[string]string `yaml:"method"`
	Seed    int64             `yaml:"seed"`
	Emb     string            `yaml:"emb"`
	Labels  string            `yaml:"labels"`
	Extra   Flags             `yaml:"extra"`
}

// Spec is a suite file.
type Spec struct {
	// Out is the root directory of the run directories (relative paths
	// are relative to the suite file; default: the suite file's name
	// without extension, next to it).
	Out string `yaml:"out"`
	// Epochs is --epochs of every run when > 0 or when EpochsSet (given
	// in the file, 0 included); otherwise the trainer's default.
	Epochs    int         `yaml:"epochs"`
	EpochsSet bool        `yaml:"-"`
	Quiet     *bool       `yaml:"quiet"`
	Extra     Flags       `yaml:"extra"`
	Grid      *Grid       `yaml:"grid"`
	Grids     []Grid      `yaml:"grids"`
	Eval      []EvalEntry `yaml:"eval"`
	// Slurm holds the resources of `--executor slurm` (see SlurmConfig).
	Slurm *SlurmConfig `yaml:"slurm"`

	// Dir is the directory of the suite file (set by Load).
	Dir string `yaml:"-"`
}

// Load reads and validates a suite file.
func Load(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", path, err)
	}
	s.Dir = filepath.Dir(path)
	if s.Out == "" {
		s.Out = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return s, nil
}

// Parse decodes and checks a suite: unknown keys (with the nearest known
// one), values of the wrong type, missing or invalid settings. It reports
// every problem it finds, one per line, each once.
func Parse(b []byte) (*Spec, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(err)
	}
	if len(root.Content) == 0 {
		return nil, errors.New("the file is empty (want a YAML suite with grid, grids or eval)")
	}
	doc := root.Content[0]
	var p Problems
	checkNode(doc, reflect.TypeOf(Spec{}), "suite", &p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	var s Spec
	if err := doc.Decode(&s); err != nil {
		return nil, yamlError(err)
	}
	s.EpochsSet = mapKey(doc, "epochs") != nil
	if g := mapKey(doc, "grid"); g != nil && s.Grid != nil {
		s.Grid.EpochsSet = mapKey(g, "epochs") != nil
	}
	if gs := mapKey(doc, "grids"); gs != nil && gs.Kind == yaml.SequenceNode {
		for i, g := range gs.Content {
			if i < len(s.Grids) {
				s.Grids[i].EpochsSet = mapKey(g, "epochs") != nil
			}
		}
	}
	if s.Grid != nil {
		s.Grids = append([]Grid{*s.Grid}, s.Grids...)
		s.Grid = nil
	}
	s.check(&p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check adds the problems of a decoded suite to p.
func (s *Spec) check(p *Problems) {
	if len(s.Grids) == 0 && len(s.Eval) == 0 {
		p.Add("no grid, grids or eval entries")
	}
	if s.Epochs < 0 {
		p.Add("epochs = %d must be ≥ 0", s.Epochs)
	}
	if s.Slurm != nil {
		if err := s.Slurm.check(); err != nil {
			p.Add("slurm: %v", err)
		}
	}
	for i, g := range s.Grids {
		where := fmt.Sprintf("grid %d", i+1)
		if len(g.Dataset) == 0 {
			p.Add("%s: no dataset", where)
		}
		if len(g.Command) > 0 {
			e, set := s.Epochs, s.EpochsSet || s.Epochs > 0
			if g.EpochsSet || g.Epochs > 0 {
				e, set = g.Epochs, true
			}
			checkCommandGrid(where, g, e, set, p)
		} else if len(g.Loss) == 0 {
			p.Add("%s: no loss", where)
		}
		if g.Tag != "" && !ValidName(g.Tag) {
			p.Add("%s: tag %q must be letters, digits and _ . + - (not starting with . or -): it names the grid's run directories", where, g.Tag)
		}
		if len(g.Seed) == 0 {
			p.Add("%s: no seed", where)
		}
		if g.Epochs < 0 {
			p.Add("%s: epochs = %d must be ≥ 0", where, g.Epochs)
		}
		seeds := map[int64]string{}
		for _, v := range g.Seed {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				p.Add("%s: seed %q is not an integer", where, v)
				continue
			}
			if prev, dup := seeds[n]; dup {
				p.Add("%s: seeds %q and %q are the same seed %d", where, prev, v, n)
			}
			seeds[n] = v
		}
		for _, l := range []struct {
			name string
			vals List
		}{{"embed-dim", g.EmbedDim}, {"batch-size", g.BatchSize}} {
			for _, v := range l.vals {
				if n, err := strconv.Atoi(v); err != nil || n <= 0 {
					p.Add("%s: %s %q is not a positive integer", where, l.name, v)
				}
			}
		}
		for _, l := range []List{g.Dataset, g.Loss, g.Miner, g.Sampler, g.Regularizer} {
			for _, v := range l {
				if strings.TrimSpace(v) == "" || strings.HasPrefix(v, "-") {
					p.Add("%s: empty value or value starting with '-' (%q)", where, v)
				}
			}
		}
	}
	names := map[string]bool{}
	for i, e := range s.Eval {
		where := fmt.Sprintf("eval entry %d", i+1)
		switch {
		case e.Name == "":
			p.Add("%s: no name", where)
		case e.Dataset == "":
			p.Add("%s (%s): no dataset", where, e.Name)
		case e.Emb == "" || e.Labels == "":
			p.Add("%s (%s): emb and labels are required", where, e.Name)
		}
		key := e.Dataset + "/" + e.Name + "/" + strconv.FormatInt(e.Seed, 10)
		if names[key] {
			p.Add("%s: %s seed %d given twice", where, e.Name, e.Seed)
		}
		names[key] = true
	}
}

// Kind of a job.
type Kind int

const (
	// Train runs `dmlbench run`.
	Train Kind = iota
	// Eval runs `dmlbench eval --format json` and stores a run.json.
	Eval
)

// Job is one run of the suite.
type Job struct {
	Kind Kind
	// Name is the run directory relative to the suite's out directory,
	// e.g. omniglot/margin-distance-spc2/s0.
	Name string
	// Dir is Out joined with Name.
	Dir string
	// Args follow the binary: "run --dataset … --out Dir" or "eval …".
	Args []string
	// Dataset, Method and Seed describe the run (eval jobs copy them into
	// run.json).
	Dataset string
	Method  map[string]string
	Seed    int64
	// Eval is the entry of an eval job.
	Eval *EvalEntry
}

// OutDir resolves the suite's output directory; override (e.g. from
// --out) wins and is taken as given.
func (s *Spec) OutDir(override string) string {
	if override != "" {
		return override
	}
	if filepath.IsAbs(s.Out) {
		return s.Out
	}
	return filepath.Join(s.Dir, s.Out)
}

// Slug lower-cases v and keeps only letters, digits and dots, so grid
// values make safe, separator-free path components ("spc-2" → "spc2").
func Slug(v string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(v) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// namePattern is a method name or tag that is a safe directory name: no
// path separator, no leading "." (a hidden directory that listings skip)
// or "-" (read as a flag).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// ValidName reports whether v may name a method or a grid's tag.
func ValidName(v string) bool { return namePattern.MatchString(v) }

// RunName is the deterministic directory of a grid point:
// dataset/loss-miner-sampler[-regularizer][-dE][-bB][-tag]/sSEED. Empty
// axes are left out; regularizer "none" is left out.
func RunName(dataset, loss, miner, sampler, reg, embed, batch, tag, seed string) string {
	parts := []string{Slug(loss)}
	for _, v := range []string{miner, sampler} {
		if v != "" {
			parts = append(parts, Slug(v))
		}
	}
	if reg != "" && !strings.EqualFold(reg, "none") {
		parts = append(parts, Slug(reg))
	}
	if embed != "" {
		parts = append(parts, "d"+Slug(embed))
	}
	if batch != "" {
		parts = append(parts, "b"+Slug(batch))
	}
	if tag != "" {
		parts = append(parts, Slug(tag))
	}
	return filepath.Join(Slug(dataset), strings.Join(parts, "-"), "s"+Slug(seed))
}

func orEmpty(l List) List {
	if len(l) == 0 {
		return List{""}
	}
	return l
}

// Jobs expands the grids (in file order; within a grid, the last axis —
// seed — varies slowest so that every method gets its first seed early)
// and the eval entries. out is the resolved output directory.
func (s *Spec) Jobs(out string) ([]Job, error) {
	quiet := s.Quiet == nil || *s.Quiet
	var jobs []Job
	seen := map[string]string{}
	add := func(j Job, what string) error {
		if prev, ok := seen[j.Name]; ok {
			return fmt.Errorf("suite: %s and %s both map to run directory %s (add a tag)", prev, what, j.Name)
		}
		seen[j.Name] = what
		jobs = append(jobs, j)
		return nil
	}
	for gi, g := range s.Grids {
		epochs, setEpochs := s.Epochs, s.EpochsSet || s.Epochs > 0
		if g.EpochsSet || g.Epochs > 0 {
			epochs, setEpochs = g.Epochs, true
		}
		if len(g.Command) > 0 {
			if err := s.commandJobs(gi, g, out, epochs, add); err != nil {
				return nil, err
			}
			continue
		}
		for _, seed := range g.Seed {
			for _, ds := range g.Dataset {
				for _, loss := range g.Loss {
					for _, miner := range orEmpty(g.Miner) {
						for _, sampler := range orEmpty(g.Sampler) {
							for _, reg := range orEmpty(g.Regularizer) {
								for _, ed := range orEmpty(g.EmbedDim) {
									for _, bs := range orEmpty(g.BatchSize) {
										name := RunName(ds, loss, miner, sampler, reg, ed, bs, g.Tag, seed)
										dir := filepath.Join(out, name)
										args := []string{"run", "--dataset", ds, "--loss", loss}
										method := map[string]string{"loss": loss}
										opt := func(flag, key, v string) {
											if v != "" {
												args = append(args, flag, v)
												method[key] = v
											}
										}
										opt("--miner", "miner", miner)
										opt("--sampler", "sampler", sampler)
										opt("--regularizer", "regularizer", reg)
										opt("--embed-dim", "embed_dim", ed)
										opt("--batch-size", "batch_size", bs)
										args = append(args, "--seed", seed)
										if setEpochs {
											args = append(args, "--epochs", strconv.Itoa(epochs))
										}
										args = append(args, "--out", dir)
										if quiet {
											args = append(args, "--quiet")
										}
										args = append(args, methodArgs(method)...)
										args = append(args, s.Extra...)
										args = append(args, g.Extra...)
										sd, _ := strconv.ParseInt(seed, 10, 64)
										j := Job{Kind: Train, Name: name, Dir: dir, Args: args, Dataset: ds, Method: method, Seed: sd}
										if err := add(j, fmt.Sprintf("grid %d point %v", gi+1, argsPoint(args))); err != nil {
											return nil, err
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	for i := range s.Eval {
		e := &s.Eval[i]
		name := filepath.Join(Slug(e.Dataset), Slug(e.Name), "s"+strconv.FormatInt(e.Seed, 10))
		method := map[string]string{}
		for k, v := range e.Method {
			method[k] = v
		}
		if len(method) == 0 {
			method["loss"] = e.Name
		}
		args := []string{"eval", "--emb", s.resolve(e.Emb), "--labels", s.resolve(e.Labels), "--format", "json"}
		if quiet {
			args = append(args, "--quiet")
		}
		args = append(args, e.Extra...)
		j := Job{Kind: Eval, Name: name, Dir: filepath.Join(out, name), Args: args, Dataset: e.Dataset, Method: method, Seed: e.Seed, Eval: e}
		if err := add(j, "eval entry "+e.Name); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// trainerMethodKeys are the method keys `dmlbench run` records itself.
var trainerMethodKeys = map[string]bool{"loss": true, "miner": true, "sampler": true}

// methodArgs passes the grid point's other method keys (regularizer,
// embed_dim, batch_size) to the run (--method KEY=VALUE), which records
// them in its run.json from the first write, so reports can group by every
// axis of the grid.
func methodArgs(method map[string]string) []string {
	keys := make([]string, 0, len(method))
	for k := range method {
		if !trainerMethodKeys[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		args = append(args, "--method", k+"="+method[k])
	}
	return args
}

// resolve makes a path of the suite file relative to the suite's directory
// (paths with a ":key" suffix for .npz keep it).
func (s *Spec) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || s.Dir == "" {
		return p
	}
	return filepath.Join(s.Dir, p)
}

func argsPoint(args []string) string {
	var kv []string
	for i := 1; i+1 < len(args); i += 2 {
		if args[i] == "--out" {
			break
		}
		kv = append(kv, strings.TrimPrefix(args[i], "--")+"="+args[i+1])
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}

// DefaultMaxCells is the most cells a suite may have unless raised.
const DefaultMaxCells = 100000

// NumCells counts the cells of the suite without expanding its grids
// (in floating point: a grid of 10⁹ points is counted, not built).
func (s *Spec) NumCells() float64 {
	n := float64(len(s.Eval))
	for _, g := range s.Grids {
		p := 1.0
		for _, l := range []List{g.Dataset, g.Loss, orEmpty(g.Miner), orEmpty(g.Sampler), orEmpty(g.Regularizer), orEmpty(g.EmbedDim), orEmpty(g.BatchSize), g.Seed} {
			p *= float64(len(l))
		}
		n += p
	}
	return n
}

// LoadCells reads the suite file path (Load) and lists its cells (Jobs)
// under its output directory: out, or the file's own when out is empty
// (OutDir). A suite of more than maxCells cells (0: DefaultMaxCells) is
// refused before its grids are expanded, and one whose started cells
// changed their settings is refused (CheckManifest). It returns the spec,
// the output directory and the cells.
func LoadCells(path, out string, maxCells int) (*Spec, string, []Job, error) {
	spec, err := Load(path)
	if err != nil {
		return nil, "", nil, err
	}
	if maxCells <= 0 {
		maxCells = DefaultMaxCells
	}
	if n := spec.NumCells(); n > float64(maxCells) {
		return nil, "", nil, fmt.Errorf("suite %s: %.0f cells, more than the limit %d: shorten the grid's lists, or raise the limit with --max-cells", path, n, maxCells)
	}
	out = spec.OutDir(out)
	jobs, err := spec.Jobs(out)
	if err != nil {
		return nil, "", nil, err
	}
	if err := CheckManifest(out, jobs); err != nil {
		return nil, "", nil, err
	}
	return spec, out, jobs, nil
}
