package tune

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/internal/record"
)

// Which fingerprint changes extend a directory and which are refused.
func TestCompareFingerprints(t *testing.T) {
	old := map[string]string{"budget": "4", "final.seeds": "[0,1]", "seed": "0", "methods.a": `{"x":1}`}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range old {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name    string
		cur     map[string]string
		ext     bool
		refused string
	}{
		{"same", old, false, ""},
		{"larger budget", with("budget", "8"), true, ""},
		{"smaller budget", with("budget", "2"), false, "(budget)"},
		{"more seeds", with("final.seeds", "[2,0,1]"), true, ""},
		{"other seeds", with("final.seeds", "[0,2]"), false, "(final.seeds)"},
		{"new method", with("methods.b", `{"x":2}`), true, ""},
		{"search repeats", with("search-repeats", "3"), true, ""},
		{"changed method", with("methods.a", `{"x":2}`), false, "(methods.a)"},
		{"removed method", with("methods.a", ""), false, "(methods.a)"},
		{"changed seed", with("seed", "1"), false, "(seed)"},
	} {
		ch, err := compareFingerprints(old, c.cur, "OUT")
		if c.refused != "" {
			if !errors.Is(err, ErrSpecChanged) || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "--out") {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err != nil || ch.Extended != c.ext {
			t.Errorf("%s: %+v, %v", c.name, ch, err)
		}
	}
}

// Cell numbers map to the directories of the documented layout.
func TestCellNumbering(t *testing.T) {
	p := tinyPlan(t, t.TempDir()) // 2 methods, budget 4, 2 folds, 2 final seeds
	if n := p.NumCells(); n != 2*2*(4+2) {
		t.Fatalf("%d cells", n)
	}
	for _, c := range []struct {
		i    int
		want string
	}{
		{0, "trials/margin/t000/f0"}, {1, "trials/margin/t000/f1"}, {7, "trials/margin/t003/f1"},
		{8, "trials/contrastive/t000/f0"}, {16, "final/margin/f0/s0"}, {17, "final/margin/f0/s1"},
		{19, "final/margin/f1/s1"}, {23, "final/contrastive/f1/s1"},
	} {
		dir, err := p.CellDir(c.i)
		if err != nil || dir != filepath.Join(p.Out, c.want) {
			t.Errorf("cell %d: %s, %v; want %s", c.i, dir, err, c.want)
		}
	}
	if _, err := p.CellDir(24); err == nil || !strings.Contains(err.Error(), "0 to 23") {
		t.Fatalf("cell 24: %v", err)
	}
	j, err := p.Job(3)
	if err != nil || j.Name != filepath.Join("trials", "margin", "t001", "f1") || j.Args[0] != "tune" || j.Args[1] != "cell" {
		t.Fatalf("job %+v, %v", j, err)
	}
}

// ParsePoint reads recorded parameters back; unknown values are errors.
func TestParsePoint(t *testing.T) {
	space := search.Space{{Name: "lr", Low: 1e-4, High: 1e-2}, {Name: "miner", Values: []string{"a", "b"}}}
	pt, err := ParsePoint(space, map[string]string{"lr": "0.003", "miner": "b"})
	if err != nil || pt[0] != 0.003 || pt[1] != 1 {
		t.Fatalf("%v, %v", pt, err)
	}
	for _, bad := range []map[string]string{{"lr": "0.003"}, {"lr": "x", "miner": "a"}, {"lr": "0.1", "miner": "c"}} {
		if _, err := ParsePoint(space, bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	r := roundPoint(space, search.Point{0.0012345678, 1})
	if r[0] != 0.001235 || r[1] != 1 {
		t.Fatalf("rounded %v", r)
	}
}

// FoldScore picks the best epoch of a higher-is-better objective and
// reports a run without it.
func TestFoldScore(t *testing.T) {
	r := &record.Run{History: []record.Epoch{
		{Epoch: 1, Metrics: record.Metrics{"MAP@R": 0.1}},
		{Epoch: 2, Metrics: record.Metrics{"MAP@R": math.NaN()}},
		{Epoch: 3, Metrics: record.Metrics{"MAP@R": 0.3}},
		{Epoch: 4, Metrics: record.Metrics{"MAP@R": 0.3}},
	}}
	if sc, ep, ok := FoldScore(r, "MAP@R"); !ok || sc != 0.3 || ep != 3 {
		t.Fatalf("%v %d %v", sc, ep, ok)
	}
	if _, _, ok := FoldScore(r, "R@1"); ok {
		t.Fatal("R@1 found in a run without it")
	}
}

// Value writes NaN as null and reads it back.
func TestValueJSON(t *testing.T) {
	for _, v := range []Value{Value(math.NaN()), Value(math.Inf(1)), 0.25} {
		b, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Value
		if err := back.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
			if string(b) != "null" || !math.IsNaN(float64(back)) {
				t.Errorf("%v: %s, %v", v, b, back)
			}
		} else if back != v {
			t.Errorf("%v read back as %v", v, back)
		}
	}
}

// Slurm scripts quote paths with spaces.
func TestTuneSlurmScriptPathWithSpace(t *testing.T) {
	s := ArrayScript(nil, "/my bin/dmlbench", "/my spec/t.yaml", "/my out", []int{0})
	for _, want := range []string{`#SBATCH --output="/my out/slurm/logs/cell%a_job%A.out"`, "exec '/my bin/dmlbench' tune '/my spec/t.yaml' --out '/my out'"} {
		if !strings.Contains(s, want) {
			t.Errorf("array script lacks %q:\n%s", want, s)
		}
	}
	n := NextScript(nil, "/b", "/s", "/my out", "7")
	if !strings.Contains(n, `#SBATCH --output="/my out/slurm/logs/next_job%j.out"`) {
		t.Errorf("follow-up script:\n%s", n)
	}
	if FormatParams(map[string]string{"b": "2", "a": "1"}) != "a=1 b=2" {
		t.Error("FormatParams")
	}
}

// Each method draws its own search stream: adding a method leaves the
// other methods' trials unchanged. A batch is proposed only when every
// trial before it has finished.
func TestMethodStreamsAndBatches(t *testing.T) {
	one := strings.Replace(tinySpec, "  - name: contrastive\n    loss: contrastive\n    miner: distance\n    space:\n      lr: {low: 1.0e-4, high: 1.0e-2, log: true}\n      miner: {values: [distance, semihard]}\n", "", 1)
	if one == tinySpec {
		t.Fatal("tinySpec changed; update the test")
	}
	a, b := planOf(t, t.TempDir(), one), tinyPlan(t, t.TempDir())
	ca, _, err := a.Next()
	if err != nil {
		t.Fatal(err)
	}
	cb, _, err := b.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(ca) != 4 || len(cb) != 8 { // max-parallel 2 trials × 2 folds per method
		t.Fatalf("first batch: %v and %v", ca, cb)
	}
	for tr := range 2 {
		x, _ := ReadCell(a.TrialDir(0, tr, 0))
		y, _ := ReadCell(b.TrialDir(0, tr, 0))
		if FormatParams(x.Params) != FormatParams(y.Params) {
			t.Fatalf("trial %d of margin: %v alone, %v beside contrastive", tr, x.Params, y.Params)
		}
	}
	// Nothing finished: the same batch again, no trial 2 proposed.
	again, _, _ := a.Next()
	if len(again) != 4 {
		t.Fatalf("second Next: %v", again)
	}
	if _, err := ReadCell(a.TrialDir(0, 2, 0)); err == nil {
		t.Fatal("trial 2 proposed before the first batch finished")
	}
}
