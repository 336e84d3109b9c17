package shards

import (
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

// A shard's command line drops the executor, shard and output flags in
// both spellings and keeps the rest in order.
func TestCommand(t *testing.T) {
	got := Command([]string{"eval", "--emb", "e.npy", "--executor", "slurm", "--shards=4", "--partial", "p",
		"-q", "--out", "r.json", "--per-query=x.csv", "--compat", "pml", "--parallel", "2"})
	if want := "eval --emb e.npy -q --compat pml"; strings.Join(got, " ") != want {
		t.Fatalf("got %q, want %q", strings.Join(got, " "), want)
	}
}

// Every combination sharding cannot honour is a usage error; the plain
// and the well-formed sharded evals pass.
func TestPlanCheck(t *testing.T) {
	for _, tc := range []struct {
		p  Plan
		ok bool
	}{
		{Plan{Parallel: 1, Embs: 2}, true},
		{Plan{Shard: "0/2", Partial: "p", Parallel: 1, Embs: 1}, true},
		{Plan{Executor: "local", Shards: 2, Partial: "p", Parallel: 2, Out: "r.json", Embs: 1}, true},
		{Plan{Merge: []string{"p"}, Parallel: 1, Out: "r.json", Embs: 1}, true},
		{Plan{Parallel: 2}, false},
		{Plan{Partial: "p", Parallel: 1}, false},
		{Plan{Shard: "0/2", Partial: "p", Parallel: 1, Embs: 2}, false},
		{Plan{Shard: "0/2", Partial: "p", Parallel: 1, GallerySizes: "10,100"}, false},
		{Plan{Shard: "0/2", Executor: "local", Partial: "p", Parallel: 1}, false},
		{Plan{Executor: "local", Merge: []string{"p"}, Partial: "p", Parallel: 1}, false},
		{Plan{Shard: "0/2", Merge: []string{"p"}, Partial: "p", Parallel: 1}, false},
		{Plan{Shard: "0/2", Parallel: 1}, false},
		{Plan{Shard: "0/2", Partial: "p", Parallel: 1, PerQuery: "q.csv"}, false},
	} {
		err := tc.p.Check()
		if (err == nil) != tc.ok || err != nil && !usage.Is(err) {
			t.Errorf("%+v: %v", tc.p, err)
		}
	}
}
