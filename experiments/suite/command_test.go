package suite

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCommandGridJobs(t *testing.T) {
	s, err := Parse([]byte(`
epochs: 3
grids:
  - dataset: [dir:data]
    command: [python3, train.py, --loss, proxy]
    tag: proxy
    params: {lr: 0.003, arch: mlp}
    embed-dim: [16, 32]
    seed: [0, 1]
`))
	if err != nil {
		t.Fatal(err)
	}
	s.Dir = "/specs"
	jobs, err := s.Jobs("/out")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 4 {
		t.Fatalf("%d jobs, want 2 seeds × 2 embed-dims", len(jobs))
	}
	j := jobs[1]
	flag := func(name string) string {
		i := slices.Index(j.Args, name)
		if i < 0 || i+1 >= len(j.Args) {
			t.Fatalf("args %v lack %s", j.Args, name)
		}
		return j.Args[i+1]
	}
	var cmd []string
	var params map[string]any
	_ = json.Unmarshal([]byte(flag("--command")), &cmd)
	_ = json.Unmarshal([]byte(flag("--params")), &params)
	if j.Args[0] != "external-cell" || flag("--dir") != j.Dir || flag("--data") != filepath.Join("/specs", "data") ||
		flag("--workdir") != "/specs" || flag("--epochs") != "3" || flag("--seed") != "0" ||
		!slices.Equal(cmd, []string{"python3", "train.py", "--loss", "proxy"}) {
		t.Errorf("args %v", j.Args)
	}
	if params["lr"] != 0.003 || params["arch"] != "mlp" || params["embed-dim"] != float64(32) {
		t.Errorf("params %v", params)
	}
	if j.Method["method"] != "proxy" || j.Method["embed_dim"] != "32" || j.Name != filepath.Join("dirdata", "proxy-d32", "s0") {
		t.Errorf("job %s method %v", j.Name, j.Method)
	}
}

func TestCommandGridErrors(t *testing.T) {
	for _, tc := range []struct{ grid, want string }{
		{"{dataset: [dir:d], command: [python3, t.py], loss: [margin], seed: [0], epochs: 2}", "give its settings in params"},
		{"{dataset: [dir:d], command: [python3, t.py], seed: [0]}", "needs epochs ≥ 1"},
		{"{dataset: [omniglot], command: [python3, t.py], seed: [0], epochs: 2}", "dataset is dir:PATH"},
		{"{dataset: [dir:d], seed: [0], epochs: 2}", "no loss"},
	} {
		_, err := Parse([]byte("grids:\n  - " + tc.grid + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.grid, err, tc.want)
		}
	}
}
