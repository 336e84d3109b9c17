package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/metrics/partial"
)

// TestSlurmEvalIntegration runs a 4-shard eval through a real Slurm
// (make test-slurm): submit the job array and its merge job, scancel a
// shard while it runs, submit again (only that shard, and a new merge),
// and compare the merged JSON with one eval's, timings aside, byte for
// byte.
func TestSlurmEvalIntegration(t *testing.T) {
	if os.Getenv("DMLBENCH_SLURM") != "1" {
		t.Skip("Slurm integration test: set DMLBENCH_SLURM=1 with a cluster up (make test-slurm)")
	}
	h := &slurmHarness{t: t, begin: time.Now(), dir: t.TempDir()}
	h.bin = filepath.Join(h.dir, "dmlbench")
	if b, err := exec.Command("go", "build", "-buildvcs=false", "-o", h.bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	emb, lab := writeShardData(t, h.dir, 40000, 64)
	args := []string{"eval", "--emb", emb, "--labels", lab, "--metrics", "R@1,R@10,MAP@R,mAP@1000", "--threads", "1", "-q"}
	single := filepath.Join(h.dir, "single.json")
	h.run(append(args, "--out", single)...)
	h.phase("single eval")
	dir := filepath.Join(h.dir, "parts")
	sharded := append(args, "--executor", "slurm", "--shards", "4", "--partial", dir, "--slurm-cpus", "1")
	merge1, stderr := h.run(sharded...)
	job := regexp.MustCompile(`as job (\d+)`).FindStringSubmatch(stderr)
	if job == nil || !strings.Contains(stderr, "shards 0-3") {
		t.Fatalf("first submission: %s", stderr)
	}
	h.submitted = append(h.submitted, job[1], strings.TrimSpace(merge1))
	t.Cleanup(func() { exec.Command("scancel", h.submitted...).Run() })
	victim := -1
	h.waitFor("a running shard", 2*time.Minute, func() bool {
		out, _ := exec.Command("squeue", "-h", "-r", "-j", job[1], "-t", "R", "-o", "%i").Output()
		for _, id := range strings.Fields(string(out)) {
			i, err := strconv.Atoi(strings.TrimPrefix(id, job[1]+"_"))
			if err == nil && len(partialMissing(dir, i)) > 0 {
				victim = i
				return true
			}
		}
		return false
	})
	task := job[1] + "_" + strconv.Itoa(victim)
	if b, err := exec.Command("scancel", task).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", task, err, b)
	}
	h.waitFor("the array to leave the queue", 3*time.Minute, func() bool { return slurmQueued(job[1]) == "" })
	if len(partialMissing(dir, victim)) == 0 {
		t.Fatalf("shard %d finished before scancel reached it: make the shards longer", victim)
	}
	h.phase("cancelled shard " + strconv.Itoa(victim))
	st, _ := h.run("eval", "status", dir)
	if !strings.Contains(st, "merge       waiting  for 1 shards") || strings.Contains(st, "shard "+strconv.Itoa(victim)+"/4  done") {
		t.Errorf("status after scancel:\n%s", st)
	}
	merge2, stderr := h.run(sharded...)
	job2 := regexp.MustCompile(`as job (\d+)`).FindStringSubmatch(stderr)
	if job2 == nil || !strings.Contains(stderr, "submitted shards "+strconv.Itoa(victim)+" as job") {
		t.Fatalf("second submission should hold only shard %d: %s", victim, stderr)
	}
	h.submitted = append(h.submitted, job2[1], strings.TrimSpace(merge2))
	h.waitFor("the first merge job to be cancelled", 30*time.Second, func() bool { return slurmQueued(strings.TrimSpace(merge1)) == "" })
	h.waitFor("the merge", 5*time.Minute, func() bool { return slurmQueued(strings.TrimSpace(merge2)) == "" })
	h.phase("merged")
	a, b := withoutTimings(t, single), withoutTimings(t, filepath.Join(dir, "result.json"))
	if a != b {
		t.Fatalf("merged result differs from one eval's:\n%s\none eval:\n%s", b, a)
	}
	if st, _ := h.run("eval", "status", dir); !strings.Contains(st, "merge       done") {
		t.Errorf("status after the merge:\n%s", st)
	}
}

// partialMissing is shard i of 4 when its partial file is not in dir.
func partialMissing(dir string, i int) []int {
	if _, err := os.Stat(filepath.Join(dir, partial.Name(metrics.Shard{Index: i, Count: 4}))); err != nil {
		return []int{i}
	}
	return nil
}

// withoutTimings is the JSON result file at path with its timings left
// out, as written (field order and number formatting kept).
func withoutTimings(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["timings"] == nil {
		t.Fatalf("%s: %v (no timings?)", path, err)
	}
	return regexp.MustCompile(`(?s)\n\s*"timings": \{[^}]*\},?`).ReplaceAllString(string(b), "")
}

// writeShardData writes n noisy rows of up to 300 classes of unequal sizes (float32, d
// columns) and their labels as .npy files in dir.
func writeShardData(t *testing.T, dir string, n, d int) (string, string) {
	t.Helper()
	rng := rand.New(rand.NewSource(7))
	labels := make([]int32, n)
	x := make([]float32, n*d)
	for i := range labels {
		labels[i] = int32(rng.ExpFloat64()*40) % 300
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(int(labels[i])*(j+1)%11) + 2*float32(rng.NormFloat64())
		}
	}
	emb, lab := filepath.Join(dir, "emb.npy"), filepath.Join(dir, "labels.npy")
	if err := arrays.SaveNPY(emb, mat32.Matrix{Rows: n, Cols: d, Data: x}); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, labels); err != nil {
		t.Fatal(err)
	}
	return emb, lab
}
