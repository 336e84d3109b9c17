package tune

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/samplers"
)

// defaultStartup is search.TPE's number of random trials when unset.
const defaultStartup = 10

// check adds the problems of the decoded settings to p and fills the
// defaults that depend on them.
func (s *Spec) check(p *problems, opt Options) {
	s.checkScalars(p)
	if s.MaxParallel == 0 {
		s.MaxParallel = 1
	}
	s.Objective = canonicalMetric(s.Objective, "objective", p)
	for i, m := range s.FinalMetrics {
		s.FinalMetrics[i] = canonicalMetric(m, "final.metrics", p)
	}
	if len(s.FinalSeeds) == 0 {
		s.FinalSeeds = []int64{s.Seed}
	}
	seen := map[int64]bool{}
	for _, v := range s.FinalSeeds {
		if seen[v] {
			p.Add("final.seeds: seed %d given twice", v)
		}
		seen[v] = true
	}
	limit := opt.MaxCells
	if limit <= 0 {
		limit = DefaultMaxCells
	}
	// Counted in floating point before anything is laid out, so a budget
	// of 1e9 is refused without allocating.
	if n := float64(len(s.Methods)) * float64(max(s.Folds, 0)) * (float64(max(s.Budget, 0))*float64(max(s.SearchRepeats, 1)) + float64(len(s.FinalSeeds))); n > float64(limit) {
		p.Add("the spec has %.0f cells (methods × folds × (budget × search repeats + final seeds)), more than the limit %d: lower the budget, or raise the limit with --max-cells", n, limit)
	}
	if s.Isolate {
		if msg := checkIsolation(); msg != "" {
			p.Add("%s", msg)
		}
	}
	// Names are directories: on a case-insensitive file system (macOS,
	// Windows) "B" and "b" would be one directory.
	names := map[string]string{}
	for _, m := range s.Methods {
		switch prev, ok := names[strings.ToLower(m.Name)]; {
		case ok && prev == m.Name:
			p.Add("method %s given twice (give each a distinct name)", m.Name)
		case ok:
			p.Add("methods %s and %s differ only in case: their directories would be one on a case-insensitive file system (give each a distinct name)", prev, m.Name)
		default:
			names[strings.ToLower(m.Name)] = m.Name
		}
		if len(m.Space) == 0 {
			p.Add("method %s: empty search space (every method is tuned)", m.Name)
			continue
		}
		if len(m.Command) > 0 {
			s.checkCommand(m, p)
			continue
		}
		s.checkMethod(m, p)
	}
}

// checkScalars checks the top-level settings.
func (s *Spec) checkScalars(p *problems) {
	switch {
	case s.Dataset == "":
		p.Add("no dataset")
	case strings.HasPrefix(s.Dataset, "dir:") && s.commandOnly():
		// Relative to the spec's directory: checked by Load (checkDataOf).
	case strings.HasPrefix(s.Dataset, "dir:"):
		d := strings.TrimPrefix(s.Dataset, "dir:")
		for _, f := range []string{fixtures.TrainEmbFile, fixtures.TrainLabelsFile} {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				p.Add("dataset %s: no %s to tune on (the tuning stage reads the training classes only)", s.Dataset, f)
			}
		}
	case fixtures.Describe(s.Dataset) == "":
		p.Add("dataset %q is not a data set (see dmlbench list datasets)", s.Dataset)
	}
	if s.Budget < 1 && !p.bad["budget"] {
		p.Add("budget = %d: want the number of trials per method (≥ 1)", s.Budget)
	}
	if s.Folds < 2 && !p.bad["folds"] {
		p.Add("folds = %d must be ≥ 2", s.Folds)
	}
	if s.SearchRepeats < 1 && !p.bad["search-repeats"] {
		p.Add("search-repeats = %d must be ≥ 1", s.SearchRepeats)
	}
	if s.MaxParallel < 0 {
		p.Add("max-parallel = %d must be ≥ 0", s.MaxParallel)
	}
	if s.Join != JoinL2 && s.Join != JoinRaw {
		p.Add("final.join %q: want %s (normalise each fold model's embedding, the default) or %s", s.Join, JoinL2, JoinRaw)
	}
	switch s.Search {
	case "random":
	case "tpe":
		s.checkTPE(p)
	default:
		p.Add("search %q: want tpe or random", s.Search)
	}
}

// checkTPE checks the TPE settings (0 takes the default).
func (s *Spec) checkTPE(p *problems) {
	t := s.TPE
	switch {
	case t.Startup < 0:
		p.Add("tpe.startup = %d must be ≥ 0 (0: %d)", t.Startup, defaultStartup)
	case t.Startup >= s.Budget && s.Budget > 0:
		p.Add("tpe.startup = %d ≥ budget %d: every trial would be random; lower tpe.startup or use search: random", t.Startup, s.Budget)
	case t.Startup == 0 && defaultStartup >= s.Budget && s.Budget > 0:
		p.Add("tpe.startup (default %d) ≥ budget %d: every trial would be random; set tpe.startup below the budget or use search: random", defaultStartup, s.Budget)
	}
	if t.Gamma < 0 || t.Gamma >= 1 {
		p.Add("tpe.gamma = %v must lie in (0, 1)", t.Gamma)
	}
	if t.Candidates < 0 {
		p.Add("tpe.candidates = %d must be ≥ 1", t.Candidates)
	}
	if t.PriorWeight < 0 {
		p.Add("tpe.prior-weight = %v must be > 0", t.PriorWeight)
	}
}

// canonicalMetric is the key a run records for metric name (any case:
// map@r is MAP@R; a family member's k as a number: p@05 is P@5), or a
// problem.
func canonicalMetric(name, where string, p *problems) string {
	if key, ok := metrics.Canonical(name); ok && !strings.HasSuffix(key, "@k") {
		return key
	}
	// A family named as such (R@k) or with a k that is not positive (R@0).
	n := strings.TrimSpace(name)
	if at := strings.LastIndex(n, "@"); at > 0 {
		if _, err := strconv.Atoi(n[at+1:]); err == nil || strings.EqualFold(n[at+1:], "k") {
			if f, ok := metrics.Lookup(n[:at] + "@1"); ok && f.Family() {
				p.Add("%s %q: %s needs a positive integer k", where, name, f.Key)
				return name
			}
		}
	}
	p.Add("%s %q is not a metric (see dmlbench list metrics)", where, name)
	return name
}

// checkMethod builds m's configuration at its space's midpoint and at
// every categorical value, so that a setting the trainer refuses (an
// unknown miner, a hyper-parameter the loss does not have) fails at load.
func (s *Spec) checkMethod(m Method, p *problems) {
	mid := make(search.Point, len(m.Space))
	for i, q := range m.Space {
		if !q.Categorical() {
			a, b := q.Low, q.High
			mid[i] = (a + b) / 2
			if q.Log {
				mid[i] = math.Sqrt(a * b)
			}
			if q.Int {
				mid[i] = math.Round(mid[i])
			}
		}
	}
	points := []search.Point{mid}
	for i, q := range m.Space {
		for j := 1; j < len(q.Values); j++ {
			pt := append(search.Point(nil), mid...)
			pt[i] = float64(j)
			points = append(points, pt)
		}
	}
	for _, pt := range points {
		cfg, err := s.Config(m, pt, s.Seed)
		if err == nil {
			err = checkConfig(cfg)
		}
		if err != nil {
			p.Add("method %s: %v", m.Name, err)
		}
	}
}

// checkConfig reports a configuration the trainer would refuse before its
// first step: an invalid setting, an unknown loss, miner, hyper-parameter,
// sampler or evaluation setting.
func checkConfig(cfg trainers.Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Epochs < 1 {
		return fmt.Errorf("epochs = %d must be ≥ 1 (the best epoch is chosen on validation)", cfg.Epochs)
	}
	if _, err := losses.New(cfg.Loss, losses.Config{NumClasses: 2, Dim: cfg.EmbedDim, Miner: cfg.Miner, Hyper: cfg.Hyper}); err != nil {
		return err
	}
	if _, err := samplers.New(cfg.Sampler); err != nil {
		return err
	}
	_, err := trainers.NewEvaluator(cfg)
	return err
}

// CheckData reports, all at once, what the training classes tc cannot
// give this spec: enough classes for the folds, a validation gallery of
// at least k for an objective R@k, a batch no larger than a fold's
// training rows.
func (s *Spec) CheckData(tc TrainingClasses) error {
	var p problems
	classes := tc.Split.NumClasses()
	folds, err := FoldClasses(classes, s.Folds)
	if err != nil {
		p.Add("folds = %d: the data set %s has %d training classes; want at most %d folds", s.Folds, s.Dataset, classes, classes)
		return p.Err()
	}
	rows := make([]int, classes)
	for _, l := range tc.Split.Labels {
		rows[l]++
	}
	total := len(tc.Split.Labels)
	minVal, minTrain := math.MaxInt, math.MaxInt
	for _, f := range folds {
		n := 0
		for _, c := range f {
			n += rows[c]
		}
		minVal, minTrain = min(minVal, n), min(minTrain, total-n)
	}
	if k, ok := recallK(s.Objective); ok && k > minVal-1 {
		p.Add("objective %s: the smallest validation fold has %d rows, so a query's gallery holds %d; want k ≤ %d (or fewer folds)", s.Objective, minVal, minVal-1, minVal-1)
	}
	for _, m := range s.Methods {
		if len(m.Space) == 0 {
			continue
		}
		if _, set := s.Fixed["batch-size"]; len(m.Command) > 0 && !set {
			continue // the command's batch is its own unless the spec sets one
		}
		cfg, err := s.Config(m, make(search.Point, len(m.Space)), s.Seed)
		if err != nil {
			continue
		}
		if cfg.BatchSize > minTrain {
			p.Add("batch-size %d exceeds the %d training rows of the smallest fold; choose at most %d (or fewer folds)", cfg.BatchSize, minTrain, minTrain)
			break
		}
	}
	return p.Err()
}

// checkDataOf loads the training classes of the spec's data set (with the
// spec's fixed data settings) and checks them (CheckData).
func (s *Spec) checkDataOf() error {
	if s.commandOnly() {
		tc, err := s.commandTrainingClasses()
		if err != nil {
			return err
		}
		return s.CheckData(tc)
	}
	cfg := trainers.Defaults()
	for k, v := range s.Fixed {
		setKey(&cfg, k, v)
	}
	cfg.Dataset = s.Dataset
	tc, err := LoadData(cfg).TrainingClasses()
	if err != nil {
		return fmt.Errorf("dataset %s: %w", s.Dataset, err)
	}
	return s.CheckData(tc)
}

// recallK is k of an objective R@k.
func recallK(key string) (int, bool) {
	if !strings.HasPrefix(key, "R@") {
		return 0, false
	}
	k, err := strconv.Atoi(key[2:])
	return k, err == nil
}
