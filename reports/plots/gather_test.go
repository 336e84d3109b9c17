package plots

import (
	"path/filepath"
	"testing"
)

// An --emb curve is named by the method of the run.json beside the file,
// never by the file's stem.
func TestEmbeddingName(t *testing.T) {
	run := "../testdata/runs/cub200/margin-distance-spc2/s0"
	if got := EmbeddingName(filepath.Join(run, "test_emb.npy"), nil, []string{"loss", "miner"}); got != "margin/distance" {
		t.Errorf("beside a run.json: %q", got)
	}
	if got := EmbeddingName("out/px/emb.npy", nil, nil); got != "px" {
		t.Errorf("no run.json: %q, want the directory's name", got)
	}
}
