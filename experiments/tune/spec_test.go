package tune

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// okSpec is a spec with no problem; the cases below change one thing.
const okSpec = `dataset: synthetic
search: random
budget: 4
folds: 2
fixed: {epochs: 2, batch-size: 16}
methods:
  - name: margin
    loss: margin
    miner: distance
    space:
      lr: {low: 1.0e-4, high: 1.0e-2, log: true}
`

// Every mistake that would surface only after the budget is spent, or
// change a setting silently, is refused at load, one line each.
func TestSpecMistakesRefusedAtLoad(t *testing.T) {
	swap := func(old, new string) string {
		if !strings.Contains(okSpec, old) {
			t.Fatalf("okSpec lacks %q", old)
		}
		return strings.Replace(okSpec, old, new, 1)
	}
	for _, c := range []struct{ name, spec, want string }{
		{"categorical value that is no setting", swap("      lr:", "      miner: {values: [distance, bogus]}\n      lr:"), "bogus"},
		{"data set typo", swap("dataset: synthetic", "dataset: omniglott"), `dataset "omniglott" is not a data set`},
		{"fractional budget", swap("budget: 4", "budget: 3.9"), `budget (line 3): "3.9" is not an integer`},
		{"fractional folds", swap("folds: 2", "folds: 2.7"), `folds (line 4): "2.7" is not an integer`},
		{"fractional epochs", swap("epochs: 2", "epochs: 1.7"), `fixed.epochs (line 5): "1.7" is not an integer`},
		{"fractional batch", swap("batch-size: 16", "batch-size: 32.9"), `fixed.batch-size (line 5): "32.9" is not an integer`},
		{"tpe gamma NaN", swap("search: random", "tpe: {gamma: .nan, startup: 2}"), `tpe.gamma (line 2): "\.nan" is not a finite number`},
		{"tpe negative startup", swap("search: random", "tpe: {startup: -5}"), "tpe.startup = -5 must be ≥ 0"},
		{"tpe startup at budget", swap("search: random", "tpe: {startup: 4}"), "tpe.startup = 4 ≥ budget 4: every trial would be random"},
		{"tpe default startup over budget", swap("search: random", "search: tpe"), "tpe.startup (default 10) ≥ budget 4"},
		{"method name .", swap("name: margin", "name: ."), `name "." must be`},
		{"method name ..", swap("name: margin", "name: .."), `name ".." must be`},
		{"method name with a slash", swap("name: margin", "name: a/b"), `name "a/b" must be`},
		{"second document", okSpec + "---\nbudget: 9\n", "a second YAML document begins at line"},
		{"8, 08, 8.0", swap("      lr:", "      test-time-k: {values: [8, 08, 8.0]}\n      lr:"), `values "8" and "08" are the same setting`},
		{"seeds not a list", okSpec + "final: {seeds: 3}\n", "final.seeds (line 12): want a list of integer seeds, e.g. [0, 1, 2]"},
		{"own epochs", swap("    miner: distance", "    miner: distance\n    fixed: {epochs: 30}"), "method margin.fixed.epochs: sets what a trial costs"},
		{"searched epochs", swap("      lr:", "      epochs: {low: 1, high: 30}\n      lr:"), "method margin.space.epochs: sets what a trial costs"},
		{"searched iters", swap("      lr:", "      iters-per-epoch: {low: 1, high: 30}\n      lr:"), "method margin.space.iters-per-epoch: sets what a trial costs"},
		{"own embedding", swap("    miner: distance", "    miner: distance\n    fixed: {embed-dim: 64}"), "method margin.fixed.embed-dim: sets what a trial costs"},
		{"budget past the limit", swap("budget: 4", "budget: 1e9"), "more than the limit 100000"},
		{"unknown objective", okSpec + "objective: MAP@Q\n", `objective "MAP@Q" is not a metric`},
		{"bad join", okSpec + "final: {join: sideways}\n", `final.join "sideways"`},
	} {
		_, err := Parse([]byte(c.spec), Options{})
		if err == nil {
			t.Errorf("%s: no error, want %q", c.name, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) && !matches(err.Error(), c.want) {
			t.Errorf("%s: error %q, want %q", c.name, err, c.want)
		}
	}
}

func matches(s, pattern string) bool {
	return strings.Contains(strings.ReplaceAll(s, `\`, ""), strings.ReplaceAll(pattern, `\`, ""))
}

// All problems of a spec come in one error, one per line.
func TestSpecProblemsInOnePass(t *testing.T) {
	spec := strings.NewReplacer("budget: 4", "budget: 3.9", "folds: 2", "folds: 2.7", "name: margin", "name: ..").Replace(okSpec)
	_, err := Parse([]byte(spec), Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"budget (line", "folds (line", `name ".."`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
	if n := strings.Count(err.Error(), "\n"); n != 3 {
		t.Errorf("want a header and 3 problem lines, got %d newlines:\n%s", n, err)
	}
}

// The objective is resolved case-insensitively to the key runs record,
// and the older key spellings are aliases of the kebab-case ones.
func TestSpecCanonicalObjectiveAndAliases(t *testing.T) {
	s, err := Parse([]byte(okSpec+"objective: map@r\nmax_parallel: 2\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Objective != "MAP@R" || s.MaxParallel != 2 {
		t.Fatalf("objective %q, max-parallel %d", s.Objective, s.MaxParallel)
	}
	s, err = Parse([]byte(okSpec+"objective: r@2\n"), Options{})
	if err != nil || s.Objective != "R@2" {
		t.Fatalf("r@2: %v, %q", err, s.Objective)
	}
	if _, err := Parse([]byte(okSpec+"max_parallel: 2\nmax-parallel: 2\n"), Options{}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("both spellings: %v", err)
	}
}

// A budget of 1e9 is refused before anything is laid out.
func TestHugeBudgetRefusedWithoutAllocating(t *testing.T) {
	spec := strings.Replace(okSpec, "budget: 4", "budget: 1000000000", 1)
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if _, err := Parse([]byte(spec), Options{}); err == nil || !strings.Contains(err.Error(), "--max-cells") {
		t.Fatalf("budget 1e9: %v", err)
	}
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	// Memory, not time, tells a count from an expansion on any machine:
	// 10⁹ cells laid out would take gigabytes.
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
		t.Fatalf("refusing allocated %.1f MiB", float64(a)/(1<<20))
	}
	if _, err := Parse([]byte(strings.Replace(okSpec, "budget: 4", "budget: 100", 1)), Options{MaxCells: 100}); err == nil {
		t.Fatal("a 204-cell spec passes a limit of 100")
	}
}

// The checks against the data set: folds vs training classes, R@k vs the
// smallest validation gallery, batch vs the smallest fold's training rows.
func TestSpecCheckedAgainstData(t *testing.T) {
	dir := t.TempDir()
	// synthetic: 32 training classes of 32 rows.
	for _, c := range []struct{ old, new, want string }{
		{"folds: 2", "folds: 40", "folds = 40: the data set synthetic has 32 training classes"},
		{"budget: 4", "budget: 4\nobjective: R@600", "objective R@600: the smallest validation fold has 512 rows"},
		{"batch-size: 16", "batch-size: 600", "batch-size 600 exceeds the 512 training rows of the smallest fold"},
	} {
		path := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(path, []byte(strings.Replace(okSpec, c.old, c.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.new, err, c.want)
		}
	}
}

// Configurations are built directly: fixed keys, the method's, the point.
func TestConfigBuiltDirectly(t *testing.T) {
	spec := strings.Replace(okSpec, "fixed: {epochs: 2, batch-size: 16}", "fixed: {epochs: 2, batch-size: 16, hidden: [32, 16], hyper: {margin: 0.3}}", 1)
	spec = strings.Replace(spec, "      lr:", "      beta: {values: [0.5, 1.5]}\n      sampler: {values: [spc-2, spc-4]}\n      lr:", 1)
	s, err := Parse([]byte(spec), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// space sorted: beta, lr, sampler
	cfg, err := s.Config(s.Methods[0], []float64{1, 0.001, 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Epochs != 2 || cfg.BatchSize != 16 || len(cfg.Hidden) != 2 || cfg.Hidden[1] != 16 || cfg.Hyper["margin"] != 0.3 ||
		cfg.Hyper["beta"] != 1.5 || cfg.Sampler != "spc-4" || cfg.LR != 0.001 || cfg.Seed != 5 || cfg.Miner != "distance" || cfg.Dataset != "synthetic" {
		t.Fatalf("config %+v", cfg)
	}
}
