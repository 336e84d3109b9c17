package tune

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/trainers"
)

// Defaults of a tuning spec.
const (
	DefaultFolds     = 4
	DefaultObjective = "MAP@R"
	DefaultSearch    = "tpe"
	// DefaultMaxCells is the most cells a spec may have unless raised
	// (Options.MaxCells): a typo in a budget should not fill a disk.
	DefaultMaxCells = 100000
)

// Ways of joining the k fold models' test embeddings into the
// concatenated row (final.join).
const (
	// JoinL2 L2-normalises each fold model's embedding before joining,
	// as powerful-benchmarker does.
	JoinL2 = "l2"
	// JoinRaw joins the embeddings as the models wrote them.
	JoinRaw = "raw"
)

// Method is one compared method: a loss (and miner) with its own fixed
// settings and search space.
type Method struct {
	Name  string
	Loss  string
	Miner string
	// Fixed are config keys of this method only (over the spec's fixed),
	// parsed to their field's type.
	Fixed map[string]any
	// Space is searched; parameters sorted by name.
	Space search.Space
	// Command, when set, is the user's trainer (command.go): no loss;
	// Fixed and Space hold any names but the shared settings, and are
	// handed to it.
	Command []string
	// Files are more files or directories of a command method's trainer
	// (relative to the spec's directory) whose hashes join the files the
	// command names (cell.Provenance) in the fingerprint and in run.json.
	Files []string
	// values are a command method's categorical values as the spec wrote
	// them (a quoted "true" a string, 8 a number), by parameter.
	values map[string][]any
	// fileHashes are cell.Provenance of the command and Files, taken by Load.
	fileHashes map[string]string
	// hyper marks the parameters that are loss hyper-parameters (config
	// key hyper) rather than config keys.
	hyper map[string]bool
}

// Spec is a tuning file (see docs/tune.md).
type Spec struct {
	Out         string
	Dataset     string
	Seed        int64
	Search      string // tpe | random
	Budget      int    // trials per method
	MaxParallel int    // trials proposed (and run) at once per method
	// Isolate runs tuning commands under bubblewrap with the data set's
	// directory replaced by the training-only view (isolate.go).
	Isolate bool
	Folds   int
	// Objective is the canonical key of the validation metric.
	Objective string
	TPE       search.TPE
	// Fixed are config keys of every method, parsed to their field's type.
	Fixed   map[string]any
	Methods []Method
	// FinalSeeds are the seeds of the final stage (default: Seed).
	FinalSeeds []int64
	// FinalMetrics are evaluated on the test classes (empty: the trainer's
	// default set).
	FinalMetrics []string
	// SearchRepeats runs the whole search this many times with different
	// search streams (default 1), to see whether the methods' order holds.
	SearchRepeats int
	// Join is how the concatenated row joins the fold models' embeddings
	// (JoinL2 or JoinRaw).
	Join  string
	Slurm *suite.SlurmConfig
	// Dir is the directory of the spec file (set by Load); File its path.
	Dir, File string
}

// Options are the limits of Load and Parse.
type Options struct {
	// MaxCells refuses a spec with more cells (0: DefaultMaxCells).
	MaxCells int
	// NoData skips the checks against the data set (CheckData) in Load.
	NoData bool
}

// Load reads and checks a spec file (Parse), then checks it against the
// training classes of its data set (CheckData).
func Load(path string, opt Options) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	s, err := Parse(b, opt)
	if err == nil {
		s.Dir, s.File = filepath.Dir(path), path
		err = s.hashCommandFiles()
		if err == nil && !opt.NoData {
			err = s.checkDataOf()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tune %s: %w", path, err)
	}
	if s.Out == "" {
		s.Out = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return s, nil
}

// OutDir resolves the output directory (override wins, as given).
func (s *Spec) OutDir(override string) string {
	return (&suite.Spec{Out: s.Out, Dir: s.Dir}).OutDir(override)
}

// Parse decodes and checks a spec. It reports every problem it finds, one
// line each naming the key (and its line); see docs/tune.md for the keys.
func Parse(b []byte, opt Options) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty (want a YAML tuning spec with dataset, budget and methods)")
		}
		return nil, errors.New(strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " "))
	}
	var p problems
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		p.Add("a second YAML document begins at line %d: a spec is one document (remove the '---')", second.Line)
	} else if !errors.Is(err, io.EOF) {
		p.Add("after the first document: %s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " "))
	}
	s := &Spec{Search: DefaultSearch, Folds: DefaultFolds, Objective: DefaultObjective, Join: JoinL2, SearchRepeats: 1}
	top := p.mapping(doc.Content[0], "spec", topKeys)
	if top == nil {
		return nil, p.Err()
	}
	s.parseTop(top, &p)
	s.check(&p, opt)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// topKeys, methodKeys, rangeKeys, tpeKeys and finalKeys are the keys a
// spec may use; aliases maps older spellings to them.
var (
	topKeys    = []string{"out", "dataset", "seed", "search", "budget", "max-parallel", "folds", "objective", "tpe", "fixed", "methods", "final", "slurm", "search-repeats", "isolate"}
	methodKeys = []string{"name", "loss", "miner", "command", "files", "budget", "fixed", "space"}
	rangeKeys  = []string{"low", "high", "log", "int", "values"}
	tpeKeys    = []string{"startup", "gamma", "candidates", "prior-weight"}
	finalKeys  = []string{"seeds", "metrics", "join"}
	aliases    = map[string]string{"max_parallel": "max-parallel", "prior_weight": "prior-weight"}
)

// parseTop decodes the keys of the top-level mapping.
func (s *Spec) parseTop(top map[string]*yaml.Node, p *problems) {
	p.str(top["out"], "out", &s.Out)
	p.str(top["dataset"], "dataset", &s.Dataset)
	p.int64(top["seed"], "seed", &s.Seed)
	p.str(top["search"], "search", &s.Search)
	p.int(top["budget"], "budget", &s.Budget)
	p.int(top["max-parallel"], "max-parallel", &s.MaxParallel)
	p.int(top["search-repeats"], "search-repeats", &s.SearchRepeats)
	p.bool(top["isolate"], "isolate", &s.Isolate)
	p.int(top["folds"], "folds", &s.Folds)
	p.str(top["objective"], "objective", &s.Objective)
	if n := top["tpe"]; n != nil {
		if m := p.mapping(n, "tpe", tpeKeys); m != nil {
			p.int(m["startup"], "tpe.startup", &s.TPE.Startup)
			p.float(m["gamma"], "tpe.gamma", &s.TPE.Gamma)
			p.int(m["candidates"], "tpe.candidates", &s.TPE.Candidates)
			p.float(m["prior-weight"], "tpe.prior-weight", &s.TPE.PriorWeight)
		}
	}
	if n := top["fixed"]; n != nil {
		s.Fixed = p.fixedMap(n, "fixed")
	}
	if n := top["final"]; n != nil {
		s.parseFinal(n, p)
	}
	if n := top["slurm"]; n != nil {
		s.parseSlurm(n, p)
	}
	s.parseMethods(top["methods"], p)
}

// parseFinal decodes final: {seeds, metrics, join}.
func (s *Spec) parseFinal(n *yaml.Node, p *problems) {
	m := p.mapping(n, "final", finalKeys)
	if m == nil {
		return
	}
	if v := m["seeds"]; v != nil {
		if v.Kind != yaml.SequenceNode {
			p.Add("final.seeds (line %d): want a list of integer seeds, e.g. [0, 1, 2]", v.Line)
		} else {
			for _, c := range v.Content {
				var x int64
				if p.int64(c, "final.seeds", &x) {
					s.FinalSeeds = append(s.FinalSeeds, x)
				}
			}
		}
	}
	if v := m["metrics"]; v != nil {
		var l suite.List
		if err := v.Decode(&l); err != nil {
			p.Add("final.metrics (line %d): want a metric or a list of metrics", v.Line)
		}
		s.FinalMetrics = l
	}
	p.str(m["join"], "final.join", &s.Join)
}

// parseSlurm decodes the slurm: block with the suite's rules.
func (s *Spec) parseSlurm(n *yaml.Node, p *problems) {
	var sb bytes.Buffer
	if err := yaml.NewEncoder(&sb).Encode(map[string]*yaml.Node{"slurm": n}); err != nil {
		p.Add("slurm (line %d): %v", n.Line, err)
		return
	}
	sp, err := suite.Parse(append(sb.Bytes(), []byte("eval: [{name: x, dataset: x, emb: x, labels: x}]\n")...))
	if err != nil {
		var pe *suite.ProblemsError
		if errors.As(err, &pe) {
			for _, m := range pe.Problems {
				p.Add("slurm: %s", m)
			}
			return
		}
		p.Add("slurm: %s", strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	s.Slurm = sp.Slurm
}

// problems collects the errors of a spec, each once, in the order found.
type problems struct {
	suite.Problems
	// bad are the keys whose value could not be read (their range is not
	// checked again).
	bad map[string]bool
}

func (p *problems) badKey(where string) {
	if p.bad == nil {
		p.bad = map[string]bool{}
	}
	p.bad[where] = true
}

// scalar is n's text, or a problem when n is not a single value.
func (p *problems) scalar(n *yaml.Node, where, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.Add("%s (line %d): want %s", where, n.Line, want)
		return "", false
	}
	return n.Value, true
}

func (p *problems) str(n *yaml.Node, where string, dst *string) {
	if n == nil {
		return
	}
	if v, ok := p.scalar(n, where, "a single value"); ok {
		*dst = v
	}
}

func (p *problems) int64(n *yaml.Node, where string, dst *int64) bool {
	if n == nil {
		return false
	}
	v, ok := p.scalar(n, where, "an integer")
	if !ok {
		p.badKey(where)
		return false
	}
	x, err := trainers.ParseInteger(v)
	if err != nil {
		p.Add("%s (line %d): %v", where, n.Line, err)
		p.badKey(where)
		return false
	}
	*dst = x
	return true
}

func (p *problems) int(n *yaml.Node, where string, dst *int) {
	var x int64
	if p.int64(n, where, &x) {
		if x != int64(int(x)) || x > 1<<40 || x < -(1<<40) {
			p.Add("%s (line %d): %d is out of range", where, n.Line, x)
			return
		}
		*dst = int(x)
	}
}

func (p *problems) float(n *yaml.Node, where string, dst *float64) {
	if n == nil {
		return
	}
	v, ok := p.scalar(n, where, "a number")
	if !ok {
		return
	}
	x, err := trainers.ParseFinite(v)
	if err != nil {
		p.Add("%s (line %d): %v", where, n.Line, err)
		return
	}
	*dst = x
}

func (p *problems) bool(n *yaml.Node, where string, dst *bool) {
	if n == nil {
		return
	}
	v, ok := p.scalar(n, where, "true or false")
	if !ok {
		return
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.Add("%s (line %d): %q is not true or false", where, n.Line, v)
		return
	}
	*dst = b
}
