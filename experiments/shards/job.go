package shards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/metrics/partial"
)

// Job is one sharded evaluation.
type Job struct {
	// Bin is the dmlbench binary (absolute for Slurm).
	Bin string
	// Args are the eval arguments shared by the shards and the merge
	// ("eval", "--emb", …), without --shard, --merge or executor flags.
	Args []string
	// Dir holds the partials, the manifest and the Slurm files.
	Dir    string
	Shards int
}

// ShardArgs is the command line of shard i.
func (j Job) ShardArgs(i int) []string {
	return append(append([]string{j.Bin}, j.Args...), "--shard", fmt.Sprintf("%d/%d", i, j.Shards), "--partial", j.Dir)
}

// MergeArgs is the command line of the merge.
func (j Job) MergeArgs() []string {
	return append(append([]string{j.Bin}, j.Args...), "--merge", j.Dir)
}

// Missing lists the shards without a partial file.
func (j Job) Missing() []int {
	_, missing := partial.Done(j.Dir, j.Shards)
	return missing
}

// manifest is DIR/shards.json: what Status needs to know about the job.
type manifest struct {
	Shards int      `json:"shards"`
	Merge  []string `json:"merge"`
	Result string   `json:"result,omitempty"`
}

// ManifestFile is the job's manifest, written by RunLocal and Slurm.
func ManifestFile(dir string) string { return filepath.Join(dir, "shards.json") }

// ResultFile is where the Slurm merge job writes the merged JSON result.
func ResultFile(dir string) string { return filepath.Join(dir, "result.json") }

func (j Job) writeManifest(result string) error {
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(manifest{Shards: j.Shards, Merge: j.MergeArgs(), Result: result}, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(ManifestFile(j.Dir), append(b, '\n'))
}

func readManifest(dir string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(ManifestFile(dir))
	if err != nil {
		return m, fmt.Errorf("%s is not the directory of a sharded eval (no shards.json): %w", dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Shards < 1 {
		return m, fmt.Errorf("%s: not a shard manifest", ManifestFile(dir))
	}
	return m, nil
}

// ParseShard reads "I/N" (0 ≤ I < N).
func ParseShard(s string) (metrics.Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	sh := metrics.Shard{Index: i, Count: n}
	if !ok || err1 != nil || err2 != nil {
		return sh, fmt.Errorf("--shard %q: want I/N, shard I (from 0) of N", s)
	}
	if err := sh.Check(); err != nil {
		return sh, fmt.Errorf("--shard %q: want 0 ≤ I < N", s)
	}
	return sh, nil
}
