package partial

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
)

func testInput() metrics.Input {
	n, d := 300, 3
	x := make([]float32, n*d)
	labels := make([]int32, n)
	for i := range x {
		x[i] = float32((i*7919)%13) / 4
	}
	for i := range labels {
		labels[i] = int32(i % 9)
	}
	labels[3] = 50 // lone: NaN terms under MAP@R
	return metrics.Input{Emb: mat32.Matrix{Rows: n, Cols: d, Data: x}, Labels: labels}
}

// Written and read back, partials keep every term's bits (NaN included)
// and merge into Evaluate's result.
func TestWriteReadMerge(t *testing.T) {
	ctx := context.Background()
	in := testInput()
	opt := metrics.Options{Metrics: []string{"R@k", "MAP@R", "mAP@1000"}, Ks: []int{1, 2}}
	dir := t.TempDir()
	var direct []*metrics.Partial
	for i := range 3 {
		p, err := metrics.EvaluateShard(ctx, in, opt, metrics.Shard{Index: i, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		direct = append(direct, p)
		if err := Write(dir, p, []string{"dmlbench", "eval"}); err != nil {
			t.Fatal(err)
		}
	}
	parts, cmd, err := ReadDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cmd, []string{"dmlbench", "eval"}) || len(parts) != 3 {
		t.Fatalf("command %v, %d parts", cmd, len(parts))
	}
	nan := false
	for s, p := range parts {
		q := direct[s]
		for j := range p.Values {
			for i, v := range p.Values[j] {
				nan = nan || math.IsNaN(v)
				if math.Float64bits(v) != math.Float64bits(q.Values[j][i]) {
					t.Fatalf("shard %d %s row %d: %v read, %v written", s, p.Keys[j], i, v, q.Values[j][i])
				}
			}
		}
		p.Values, q.Values = nil, nil
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("shard %d: read %+v, wrote %+v", s, p, q)
		}
	}
	if !nan {
		t.Fatal("no NaN term: the lone query was meant to give one")
	}
	parts, _, _ = ReadDirs(dir)
	merged, err := metrics.Merge(ctx, in, opt, parts)
	if err != nil {
		t.Fatal(err)
	}
	single, err := metrics.Evaluate(ctx, in, opt)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range single.Metrics {
		if math.Float64bits(merged.Metrics[k]) != math.Float64bits(v) {
			t.Errorf("%s: merged %v, single %v", k, merged.Metrics[k], v)
		}
	}
	if done, missing := Done(dir, 4); len(done) != 0 || len(missing) != 4 {
		t.Errorf("Done(4 shards) = %v, %v", done, missing)
	}
	if done, missing := Done(dir, 3); len(done) != 3 || len(missing) != 0 {
		t.Errorf("Done(3 shards) = %v, %v", done, missing)
	}
}

// Files that are not partials of this version are refused by name.
func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		`{"format":"other","version":1}`:                                                        `format "other"`,
		`{"format":"dmlbench-partial","version":99}`:                                            "version 99",
		`{"format":"dmlbench-partial","version":1,"x":1}`:                                       "not a partial result",
		`{"format":"dmlbench-partial","version":1,"keys":["R@1"],"terms":[]}`:                   "0 columns of terms for 1 keys",
		`{"format":"dmlbench-partial","version":1,"index":[0],"keys":["R@1"],"terms":["AAAA"]}`: "holds 3 bytes for 1 queries",
	}
	for body, want := range cases {
		path := filepath.Join(dir, "partial-00000-of-00001.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Read(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", body, err, want)
		}
	}
	if _, _, err := ReadDirs(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no partial results") {
		t.Errorf("empty directory: %v", err)
	}
}
