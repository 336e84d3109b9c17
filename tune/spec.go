package tune

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/suite"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/tune/search"
)

// Defaults of a tuning spec.
const (
	DefaultFolds     = 4
	DefaultObjective = "MAP@R"
	DefaultSearch    = "tpe"
)

// Method is one compared method: a loss (and miner) with its own fixed
// settings and search space.
type Method struct {
	Name  string
	Loss  string
	Miner string
	// Fixed are config keys of this method only (over the spec's fixed).
	Fixed map[string]any
	// Space is searched; parameters sorted by name.
	Space search.Space
	// Command, when set, is the user's trainer (command.go): no loss, and
	// Fixed and Space may hold any names, which are handed to it.
	Command []string
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
	Folds       int
	Objective   string
	TPE         search.TPE
	Fixed       map[string]any
	Methods     []Method
	// FinalSeeds are the seeds of the final stage (default: Seed).
	FinalSeeds []int64
	// FinalMetrics are evaluated on the test classes (empty: the trainer's
	// default set).
	FinalMetrics []string
	Slurm        *suite.SlurmConfig
	// Dir is the directory of the spec file (set by Load); File its path.
	Dir, File string
}

// topKeys, methodKeys and rangeKeys are the keys a spec may use.
var (
	topKeys    = []string{"out", "dataset", "seed", "search", "budget", "max_parallel", "folds", "objective", "tpe", "fixed", "methods", "final", "slurm"}
	methodKeys = []string{"name", "loss", "miner", "command", "budget", "fixed", "space"}
	rangeKeys  = []string{"low", "high", "log", "int", "values"}
	tpeKeys    = []string{"startup", "gamma", "candidates", "prior_weight"}
	finalKeys  = []string{"seeds", "metrics"}
	// reserved are config keys the protocol sets itself.
	reserved = map[string]string{
		"dataset": "give it at the top level", "seed": "the spec's seed and final.seeds set it",
		"val-split": "the folds are the validation split", "select-by": "the objective picks the epoch",
		"save-embeddings": "the final stage saves the test embeddings", "metrics": "use objective and final.metrics",
		"test-time": "not part of the tuning protocol", "loss": "give it per method", "teacher": "not part of the tuning protocol",
	}
)

// ConfigKeys are the keys of trainers.Config (the flags of `dmlbench run`).
func ConfigKeys() []string {
	t := reflect.TypeOf(trainers.Config{})
	var keys []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// configKind is the reflect kind of a config key's field.
func configKind(key string) (reflect.Kind, bool) {
	t := reflect.TypeOf(trainers.Config{})
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k == key {
			return t.Field(i).Type.Kind(), true
		}
	}
	return 0, false
}

// Load reads and validates a spec file.
func Load(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("tune %s: %w", path, err)
	}
	s.Dir, s.File = filepath.Dir(path), path
	if s.Out == "" {
		s.Out = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return s, nil
}

// OutDir resolves the output directory (override wins, as given).
func (s *Spec) OutDir(override string) string {
	return (&suite.Spec{Out: s.Out, Dir: s.Dir}).OutDir(override)
}

// mapping returns the keys and values of a YAML mapping, refusing keys
// outside known with the nearest known key suggested.
func mapping(n *yaml.Node, where string, known []string) (map[string]*yaml.Node, []string, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s (line %d): want a mapping of keys", where, n.Line)
	}
	m := map[string]*yaml.Node{}
	var order []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if known != nil && !contains(known, k) {
			return nil, nil, unknownKey(where, k, n.Content[i].Line, known)
		}
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("%s (line %d): key %s given twice", where, n.Content[i].Line, k)
		}
		m[k] = n.Content[i+1]
		order = append(order, k)
	}
	return m, order, nil
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// unknownKey is the one-line error of a key outside known, naming the
// nearest known key when it is close (suggest.Nearest).
func unknownKey(where, key string, line int, known []string) error {
	if best := suggest.Nearest(key, known); best != "" {
		return fmt.Errorf("%s (line %d): unknown key %q; did you mean %q?", where, line, key, best)
	}
	return fmt.Errorf("%s (line %d): unknown key %q (known: %s)", where, line, key, strings.Join(known, ", "))
}

// decode decodes a scalar or structure node into v with a located error.
func decode(n *yaml.Node, where string, v any) error {
	if err := n.Decode(v); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		msg = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(msg, "yaml: unmarshal errors:")), "yaml: ")
		return fmt.Errorf("%s (line %d): %s", where, n.Line, msg)
	}
	return nil
}

// Parse decodes and validates a spec. Every error is one line naming the
// offending key (and its line).
func Parse(b []byte) (*Spec, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty (want a YAML tuning spec with dataset, budget and methods)")
		}
		return nil, errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
	}
	top, _, err := mapping(doc.Content[0], "spec", topKeys)
	if err != nil {
		return nil, err
	}
	s := &Spec{Search: DefaultSearch, Folds: DefaultFolds, Objective: DefaultObjective}
	fields := []struct {
		key string
		v   any
	}{{"out", &s.Out}, {"dataset", &s.Dataset}, {"seed", &s.Seed}, {"search", &s.Search}, {"budget", &s.Budget},
		{"max_parallel", &s.MaxParallel}, {"folds", &s.Folds}, {"objective", &s.Objective}}
	for _, f := range fields {
		if n, ok := top[f.key]; ok {
			if err := decode(n, f.key, f.v); err != nil {
				return nil, err
			}
		}
	}
	if err := s.parseParts(top); err != nil {
		return nil, err
	}
	return s, s.validate()
}

// parseParts decodes the structured keys: tpe, fixed, final, slurm, methods.
func (s *Spec) parseParts(top map[string]*yaml.Node) error {
	if n, ok := top["tpe"]; ok {
		m, _, err := mapping(n, "tpe", tpeKeys)
		if err != nil {
			return err
		}
		for k, v := range map[string]any{"startup": &s.TPE.Startup, "gamma": &s.TPE.Gamma, "candidates": &s.TPE.Candidates, "prior_weight": &s.TPE.PriorWeight} {
			if vn, ok := m[k]; ok {
				if err := decode(vn, "tpe."+k, v); err != nil {
					return err
				}
			}
		}
	}
	var err error
	if n, ok := top["fixed"]; ok {
		if s.Fixed, err = fixedMap(n, "fixed"); err != nil {
			return err
		}
	}
	if n, ok := top["final"]; ok {
		m, _, err := mapping(n, "final", finalKeys)
		if err != nil {
			return err
		}
		if v, ok := m["seeds"]; ok {
			if err := decode(v, "final.seeds", &s.FinalSeeds); err != nil {
				return err
			}
		}
		if v, ok := m["metrics"]; ok {
			var l suite.List
			if err := decode(v, "final.metrics", &l); err != nil {
				return err
			}
			s.FinalMetrics = l
		}
	}
	if n, ok := top["slurm"]; ok {
		s.Slurm = &suite.SlurmConfig{}
		var sb bytes.Buffer
		enc := yaml.NewEncoder(&sb)
		if err := enc.Encode(map[string]*yaml.Node{"slurm": n}); err != nil {
			return err
		}
		sp, err := suite.Parse(append(sb.Bytes(), []byte("eval: [{name: x, dataset: x, emb: x, labels: x}]\n")...))
		if err != nil {
			return fmt.Errorf("slurm: %s", strings.ReplaceAll(err.Error(), "\n", " "))
		}
		s.Slurm = sp.Slurm
	}
	n, ok := top["methods"]
	if !ok || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return errors.New("methods: want a list of at least one method ({name, loss, space})")
	}
	budgets := map[string]int{}
	for i, mn := range n.Content {
		m, err := s.parseMethod(mn, i, budgets)
		if err != nil {
			return err
		}
		s.Methods = append(s.Methods, m)
	}
	return s.checkBudgets(budgets)
}

// checkBudgets makes the per-method budgets (where given) equal to each
// other and to the spec's: the same number of trials for every method, or
// the comparison is not fair.
func (s *Spec) checkBudgets(budgets map[string]int) error {
	if len(budgets) == 0 {
		return nil
	}
	names := make([]string, 0, len(budgets))
	for k := range budgets {
		names = append(names, k)
	}
	sort.Strings(names)
	ref, refName := s.Budget, "the spec's budget"
	if ref == 0 {
		ref, refName = budgets[names[0]], names[0]
	}
	for _, k := range names {
		if budgets[k] != ref {
			var parts []string
			for _, m := range s.Methods {
				b := s.Budget
				if v, ok := budgets[m.Name]; ok {
					b = v
				}
				parts = append(parts, fmt.Sprintf("%s %d", m.Name, b))
			}
			return fmt.Errorf("unequal budgets (%s; %s is %d): every method gets the same number of trials, or the comparison is not fair", strings.Join(parts, ", "), refName, ref)
		}
	}
	s.Budget = ref
	return nil
}

// fixedMap decodes a mapping of config keys, refusing unknown and reserved ones.
func fixedMap(n *yaml.Node, where string) (map[string]any, error) {
	keys := ConfigKeys()
	m, _, err := mapping(n, where, keys)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range m {
		if why, ok := reserved[k]; ok && k != "metrics" {
			return nil, fmt.Errorf("%s.%s (line %d): set by the tuning protocol (%s)", where, k, v.Line, why)
		}
		if k == "metrics" {
			return nil, fmt.Errorf("%s.metrics (line %d): %s", where, v.Line, reserved[k])
		}
		var x any
		if err := decode(v, where+"."+k, &x); err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}

func (s *Spec) parseMethod(mn *yaml.Node, i int, budgets map[string]int) (Method, error) {
	where := fmt.Sprintf("methods[%d]", i)
	m, _, err := mapping(mn, where, methodKeys)
	if err != nil {
		return Method{}, err
	}
	var me Method
	for k, v := range map[string]*string{"name": &me.Name, "loss": &me.Loss, "miner": &me.Miner} {
		if n, ok := m[k]; ok {
			if err := decode(n, where+"."+k, v); err != nil {
				return Method{}, err
			}
		}
	}
	if _, ok := m["command"]; ok {
		return s.parseCommandMethod(me, m, where, budgets)
	}
	if me.Loss == "" {
		return Method{}, fmt.Errorf("%s: no loss", where)
	}
	if me.Name == "" {
		me.Name = me.Loss
		if me.Miner != "" {
			me.Name += "-" + me.Miner
		}
	}
	where = fmt.Sprintf("method %s", me.Name)
	if suite.Slug(me.Name) != strings.ToLower(me.Name) && strings.ContainsAny(me.Name, "/ \t") {
		return Method{}, fmt.Errorf("%s: the name may not hold '/' or spaces", where)
	}
	info, ok := losses.Lookup(me.Loss)
	if !ok {
		return Method{}, fmt.Errorf("%s: unknown loss %q (see dmlbench list losses)", where, me.Loss)
	}
	if n, ok := m["budget"]; ok {
		var b int
		if err := decode(n, where+".budget", &b); err != nil {
			return Method{}, err
		}
		budgets[me.Name] = b
	}
	if n, ok := m["fixed"]; ok {
		if me.Fixed, err = fixedMap(n, where+".fixed"); err != nil {
			return Method{}, err
		}
	}
	me.hyper = map[string]bool{}
	if n, ok := m["space"]; ok {
		sm, order, err := mapping(n, where+".space", nil)
		if err != nil {
			return Method{}, err
		}
		hyperNames := make([]string, 0, len(info.Hyper))
		for h := range info.Hyper {
			hyperNames = append(hyperNames, h)
		}
		sort.Strings(hyperNames)
		known := append(ConfigKeys(), hyperNames...)
		sort.Strings(order)
		for _, k := range order {
			if why, bad := reserved[k]; bad {
				return Method{}, fmt.Errorf("%s.space.%s: cannot be searched (%s)", where, k, why)
			}
			kind, isCfg := configKind(k)
			_, isHyper := info.Hyper[k]
			if !isCfg && !isHyper {
				return Method{}, unknownKey(where+".space", k, sn(sm[k]), known)
			}
			p, err := parseRange(sm[k], where+".space."+k)
			if err != nil {
				return Method{}, err
			}
			p.Name = k
			if isHyper && !isCfg {
				me.hyper[k] = true
			} else if !p.Categorical() {
				switch kind {
				case reflect.Int, reflect.Int64:
					p.Int = true
				case reflect.Float64:
				default:
					return Method{}, fmt.Errorf("%s.space.%s: a range needs a numeric setting; give values: [...]", where, k)
				}
			}
			if err := p.Validate(); err != nil {
				return Method{}, fmt.Errorf("%s.space.%s", where, err)
			}
			me.Space = append(me.Space, p)
		}
	}
	return me, nil
}

func sn(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// parseRange decodes {low, high, log, int} or {values: [...]}.
func parseRange(n *yaml.Node, where string) (search.Param, error) {
	var p search.Param
	m, _, err := mapping(n, where, rangeKeys)
	if err != nil {
		return p, err
	}
	if v, ok := m["values"]; ok {
		if len(m) > 1 {
			return p, fmt.Errorf("%s (line %d): give values or low/high, not both", where, n.Line)
		}
		var l suite.List
		if err := decode(v, where+".values", &l); err != nil {
			return p, err
		}
		if len(l) == 0 {
			return p, fmt.Errorf("%s (line %d): empty values list", where, n.Line)
		}
		p.Values = l
		return p, nil
	}
	lo, okL := m["low"]
	hi, okH := m["high"]
	if !okL || !okH {
		return p, fmt.Errorf("%s (line %d): want low and high (or values)", where, n.Line)
	}
	if err := decode(lo, where+".low", &p.Low); err != nil {
		return p, err
	}
	if err := decode(hi, where+".high", &p.High); err != nil {
		return p, err
	}
	for k, v := range map[string]*bool{"log": &p.Log, "int": &p.Int} {
		if x, ok := m[k]; ok {
			if err := decode(x, where+"."+k, v); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// validate checks the scalar settings and builds every method's config at
// its space's midpoint, so a setting the trainer refuses fails here.
func (s *Spec) validate() error {
	switch {
	case s.Dataset == "":
		return errors.New("no dataset")
	case s.Budget < 1:
		return fmt.Errorf("budget = %d: want the number of trials per method (≥ 1)", s.Budget)
	case s.Folds < 2:
		return fmt.Errorf("folds = %d must be ≥ 2", s.Folds)
	case s.MaxParallel < 0:
		return fmt.Errorf("max_parallel = %d must be ≥ 0", s.MaxParallel)
	case s.Search != "tpe" && s.Search != "random":
		return fmt.Errorf("search %q: want tpe or random", s.Search)
	case s.TPE.Gamma < 0 || s.TPE.Gamma >= 1:
		return fmt.Errorf("tpe.gamma = %v must lie in (0, 1)", s.TPE.Gamma)
	}
	if s.MaxParallel == 0 {
		s.MaxParallel = 1
	}
	if _, ok := metrics.Lookup(s.Objective); !ok {
		return fmt.Errorf("objective %q is not a metric (see dmlbench list metrics)", s.Objective)
	}
	for _, m := range s.FinalMetrics {
		if _, ok := metrics.Lookup(m); !ok {
			return fmt.Errorf("final.metrics: %q is not a metric (see dmlbench list metrics)", m)
		}
	}
	if len(s.FinalSeeds) == 0 {
		s.FinalSeeds = []int64{s.Seed}
	}
	seen := map[int64]bool{}
	for _, v := range s.FinalSeeds {
		if seen[v] {
			return fmt.Errorf("final.seeds: seed %d given twice", v)
		}
		seen[v] = true
	}
	names := map[string]bool{}
	for _, m := range s.Methods {
		if names[m.Name] {
			return fmt.Errorf("method %s given twice (give each a distinct name)", m.Name)
		}
		names[m.Name] = true
		if len(m.Space) == 0 {
			return fmt.Errorf("method %s: empty search space (every method is tuned)", m.Name)
		}
		if len(m.Command) > 0 {
			if err := s.validateCommand(m); err != nil {
				return err
			}
			continue
		}
		mid := make(search.Point, len(m.Space))
		for i, p := range m.Space {
			if !p.Categorical() {
				a, b := p.Low, p.High
				mid[i] = (a + b) / 2
				if p.Log {
					mid[i] = math.Sqrt(a * b)
				}
				if p.Int {
					mid[i] = math.Round(mid[i])
				}
			}
		}
		cfg, err := s.Config(m, mid, s.Seed)
		if err != nil {
			return err
		}
		if err := cfg.WithDefaults().Validate(); err != nil {
			return fmt.Errorf("method %s: %w", m.Name, err)
		}
		if cfg.Epochs < 1 {
			return fmt.Errorf("method %s: epochs = %d must be ≥ 1 (the best epoch is chosen on validation)", m.Name, cfg.Epochs)
		}
	}
	return nil
}

// Config is the trainer configuration of method m at point pt with seed:
// trainers.Defaults, then the spec's fixed keys, the method's, its loss and
// miner, then the point's values (config keys, or loss hyper-parameters).
// The objective selects the best epoch and is the only metric evaluated.
func (s *Spec) Config(m Method, pt search.Point, seed int64) (trainers.Config, error) {
	if len(m.Command) > 0 {
		return s.commandConfig(m, seed)
	}
	doc := map[string]any{}
	for k, v := range s.Fixed {
		doc[k] = v
	}
	hyper := map[string]any{}
	for k, v := range m.Fixed {
		if k == "hyper" {
			if hm, ok := v.(map[string]any); ok {
				for hk, hv := range hm {
					hyper[hk] = hv
				}
				continue
			}
		}
		doc[k] = v
	}
	if hm, ok := doc["hyper"].(map[string]any); ok {
		for hk, hv := range hm {
			if _, set := hyper[hk]; !set {
				hyper[hk] = hv
			}
		}
	}
	doc["dataset"], doc["loss"], doc["seed"] = s.Dataset, m.Loss, seed
	if m.Miner != "" {
		doc["miner"] = m.Miner
	}
	for i, p := range m.Space {
		var v any = pt[i]
		if p.Categorical() {
			var x any
			if err := yaml.Unmarshal([]byte(p.Format(pt[i])), &x); err != nil || x == nil {
				x = p.Format(pt[i])
			}
			v = x
		} else if p.Int {
			v = int64(pt[i])
		}
		if m.hyper[p.Name] {
			hyper[p.Name] = v
		} else {
			doc[p.Name] = v
		}
	}
	if len(hyper) > 0 {
		doc["hyper"] = hyper
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return trainers.Config{}, err
	}
	cfg := trainers.Defaults()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return trainers.Config{}, fmt.Errorf("method %s: %s", m.Name, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return cfg, nil
}

// Describe is a point as "k=v k=v" in space order.
func Describe(space search.Space, pt search.Point) string {
	parts := make([]string, len(space))
	for i, p := range space {
		parts[i] = p.Name + "=" + p.Format(pt[i])
	}
	return strings.Join(parts, " ")
}

// ParsePoint reads back the values of Describe (or of a trial record).
func ParsePoint(space search.Space, values map[string]string) (search.Point, error) {
	pt := make(search.Point, len(space))
	for i, p := range space {
		v, ok := values[p.Name]
		if !ok {
			return nil, fmt.Errorf("no value for %s", p.Name)
		}
		if p.Categorical() {
			idx := -1
			for j, c := range p.Values {
				if c == v {
					idx = j
				}
			}
			if idx < 0 {
				return nil, fmt.Errorf("%s = %q is not among %v", p.Name, v, p.Values)
			}
			pt[i] = float64(idx)
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s = %q: %w", p.Name, v, err)
		}
		pt[i] = x
	}
	return pt, nil
}
