package tune

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/trainers"
)

// The slurm block follows the suite's rules (kebab-case, alias, checks),
// final metrics are resolved to their keys, seeds must be distinct.
func TestSpecFinalAndSlurm(t *testing.T) {
	s, err := Parse([]byte(okSpec+"final: {seeds: [3, 1], metrics: [r@1, map@r, nmi], join: raw}\nslurm: {partition: cpu, max-parallel: 4}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.FinalMetrics, ",") != "R@1,MAP@R,NMI" || s.Join != JoinRaw || s.FinalSeeds[0] != 3 || s.Slurm == nil || s.Slurm.MaxParallel != 4 || s.Slurm.Partition != "cpu" {
		t.Fatalf("final %v %s %v slurm %+v", s.FinalMetrics, s.Join, s.FinalSeeds, s.Slurm)
	}
	for _, c := range []struct{ add, want string }{
		{"final: {seeds: [1, 1]}\n", "final.seeds: seed 1 given twice"},
		{"final: {seeds: [1, 1.5]}\n", `final.seeds (line 11): "1.5" is not an integer`},
		{"final: {metrics: [R@0]}\n", "R@k needs a positive integer k"},
		{"slurm: {max-parallel: -1}\n", "slurm: "},
		{"slurm: {partitionn: cpu}\n", "slurm: "},
		{"search-repeats: 0\n", "search-repeats = 0 must be ≥ 1"},
		{"folds: [2]\n", "want an integer"},
	} {
		_, err := Parse([]byte(strings.Replace(okSpec, "folds: 2\n", "", 1)+c.add), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.add, err, c.want)
		}
	}
}

// The default spec values, and the fingerprint's keys.
func TestSpecDefaultsAndFingerprint(t *testing.T) {
	s, err := Parse([]byte(okSpec), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxParallel != 1 || s.Join != JoinL2 || s.SearchRepeats != 1 || len(s.FinalSeeds) != 1 || s.FinalSeeds[0] != 0 || s.Objective != "MAP@R" {
		t.Fatalf("defaults %+v", s)
	}
	fp := s.Fingerprint()
	for _, k := range []string{"dataset", "seed", "search", "folds", "objective", "max-parallel", "tpe", "fixed", "final.metrics", "final.join", "budget", "final.seeds", "methods.margin"} {
		if _, ok := fp[k]; !ok {
			t.Errorf("fingerprint lacks %s", k)
		}
	}
	if _, ok := fp["search-repeats"]; ok {
		t.Error("a spec without repeats has a search-repeats fingerprint")
	}
	s2, _ := Parse([]byte(strings.Replace(okSpec, "epochs: 2", "epochs: 3", 1)), Options{})
	if s2.Fingerprint()["fixed"] == fp["fixed"] {
		t.Error("a changed fixed setting keeps the fingerprint")
	}
}

// CheckData on hand-counted folds: 5 classes of sizes 2, 3, 4, 5, 6 in 2
// folds ({0,1,2}: 9 rows, {3,4}: 11 rows): the smallest validation fold
// has 9 rows (gallery 8), the smallest training side 9 rows.
func TestCheckDataHandCounted(t *testing.T) {
	var labels []int32
	for c, n := range []int{2, 3, 4, 5, 6} {
		for range n {
			labels = append(labels, int32(c))
		}
	}
	tc := TrainingClasses{Split: fixtures.Split{X: mat32.Matrix{Rows: len(labels), Cols: 1, Data: make([]float32, len(labels))}, Labels: labels, ClassNames: []string{"a", "b", "c", "d", "e"}}}
	spec := func(objective string, batch int) *Spec {
		s, err := Parse([]byte(strings.Replace(strings.Replace(okSpec, "batch-size: 16", "batch-size: "+strconv.Itoa(batch), 1), "budget: 4", "budget: 4\nobjective: "+objective, 1)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := spec("R@8", 9).CheckData(tc); err != nil {
		t.Fatalf("R@8, batch 9: %v", err)
	}
	err := spec("R@9", 10).CheckData(tc)
	if err == nil || !strings.Contains(err.Error(), "has 9 rows, so a query's gallery holds 8") || !strings.Contains(err.Error(), "batch-size 10 exceeds the 9 training rows") {
		t.Fatalf("R@9, batch 10: %v", err)
	}
	s := spec("MAP@R", 2)
	s.Folds = 6
	if err := s.CheckData(tc); err == nil || !strings.Contains(err.Error(), "has 5 training classes") {
		t.Fatalf("6 folds of 5 classes: %v", err)
	}
}

// A feature directory without train files cannot be tuned on: refused at
// load, and LoadData says why.
func TestDirWithoutTrainFiles(t *testing.T) {
	dir := t.TempDir()
	spec := strings.Replace(okSpec, "dataset: synthetic", "dataset: dir:"+dir, 1)
	_, err := Parse([]byte(spec), Options{})
	if err == nil || !strings.Contains(err.Error(), "no train_emb.npy to tune on") {
		t.Fatalf("spec: %v", err)
	}
	cfg := trainers.Defaults()
	cfg.Dataset = "dir:" + dir
	if _, err := LoadData(cfg).TrainingClasses(); err == nil || !strings.Contains(err.Error(), "training classes only") {
		t.Fatalf("data: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, fixtures.TrainEmbFile), []byte("not npy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadData(cfg).TrainingClasses(); err == nil {
		t.Fatal("a damaged train file loads")
	}
}

// A final cell of another trial is replaced; the same cell is kept.
func TestWriteFinalCellReplacesStale(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "final", "m", "f0", "s0")
	c := &Cell{Stage: StageFinal, Method: "m", Trial: 2, Folds: 2}
	if err := writeFinalCell(dir, c); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "run.json")
	if err := os.WriteFile(marker, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFinalCell(dir, c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the same final cell was rewritten")
	}
	c2 := *c
	c2.Trial = 4
	if err := writeFinalCell(dir, &c2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("a final cell of another trial kept its run.json")
	}
	if got, _ := ReadCell(dir); got.Trial != 4 {
		t.Fatalf("trial %d", got.Trial)
	}
}

// A trial with a failed fold is done and failed, with a NaN score; one
// with a fold still running is not done.
func TestTrialsFromDisk(t *testing.T) {
	p := tinyPlan(t, t.TempDir())
	if _, _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.TrialDir(0, 0, 1), FailedFile), []byte("diverged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := p.trials(0)
	if err != nil || len(tr) != 2 {
		t.Fatalf("%d trials, %v", len(tr), err)
	}
	if tr[0].Done || tr[0].Failed {
		t.Fatalf("trial 0 with fold 0 not run: %+v", tr[0])
	}
	if err := os.WriteFile(filepath.Join(p.TrialDir(0, 0, 0), FailedFile), []byte("diverged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, _ = p.trials(0)
	if !tr[0].Done || !tr[0].Failed || !math.IsNaN(float64(tr[0].Score)) {
		t.Fatalf("trial 0 with both folds failed: %+v", tr[0])
	}
}

// A family member keeps its own key (P@5 is not P@k); an alias names
// its member.
func TestCanonicalMetricFamilies(t *testing.T) {
	var p problems
	for in, want := range map[string]string{"P@5": "P@5", "map@10": "mAP@10", "r@05": "R@5", "precision_at_1": "R@1", "mapr": "MAP@R"} {
		if got := canonicalMetric(in, "objective", &p); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if p.Len() > 0 {
		t.Errorf("problems %v", p.Err())
	}
}
