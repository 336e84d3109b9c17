package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Shards run one by one (--shard, as array tasks run them) and merged
// (--merge) print what one eval prints: JSON without timings, and the
// table, for each convention; --gallery-block gives the same numbers.
func TestEvalShardMergeCLI(t *testing.T) {
	dir := t.TempDir()
	emb, lab := writeShardData(t, dir, 2500, 8)
	for _, conv := range []string{"strict", "roth", "pml"} {
		args := []string{"eval", "--emb", emb, "--labels", lab, "--compat", conv, "-q"}
		if conv != "roth" {
			args = append(args, "--per-class")
		}
		parts := filepath.Join(dir, "parts-"+conv)
		for _, sh := range []string{"2/3", "0/3", "1/3"} {
			if _, stderr, code := runCLI(t, append(args, "--shard", sh, "--partial", parts)...); code != 0 {
				t.Fatalf("%s shard %s: %s", conv, sh, stderr)
			}
		}
		single, merged := filepath.Join(dir, conv+"-single.json"), filepath.Join(dir, conv+"-merged.json")
		tab1, stderr, code := runCLI(t, append(args, "--out", single)...)
		if code != 0 {
			t.Fatal(stderr)
		}
		tab2, stderr, code := runCLI(t, append(args, "--merge", parts, "--out", merged)...)
		if code != 0 {
			t.Fatalf("%s merge: %s", conv, stderr)
		}
		if a, b := withoutTimings(t, single), withoutTimings(t, merged); a != b {
			t.Errorf("%s: merged JSON differs:\n%s\nsingle:\n%s", conv, b, a)
		}
		if a, b := withoutTableTimes(tab1), withoutTableTimes(tab2); a != b {
			t.Errorf("%s: merged table differs:\n%s\nsingle:\n%s", conv, b, a)
		}
		blocked := filepath.Join(dir, conv+"-blocked.json")
		if _, stderr, code := runCLI(t, append(args, "--gallery-block", "300", "--out", blocked)...); code != 0 {
			t.Fatalf("%s --gallery-block: %s", conv, stderr)
		}
		if a, b := withoutTimings(t, single), withoutTimings(t, blocked); a != b {
			t.Errorf("%s: --gallery-block JSON differs:\n%s\nsingle:\n%s", conv, b, a)
		}
	}
}

// withoutTableTimes drops the table's timing line (its last but one).
func withoutTableTimes(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, " s (k-NN") {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// Sharding refuses what it cannot honour with one line each.
func TestEvalShardRefusals(t *testing.T) {
	dir := t.TempDir()
	emb, lab := writeShardData(t, dir, 300, 4)
	other, _ := writeShardData(t, t.TempDir(), 300, 5)
	base := []string{"eval", "--emb", emb, "--labels", lab, "--metrics", "R@1,MAP@R", "-q"}
	parts := filepath.Join(dir, "parts")
	for _, sh := range []string{"0/2", "1/2"} {
		if _, stderr, code := runCLI(t, append(base, "--shard", sh, "--partial", parts)...); code != 0 {
			t.Fatal(stderr)
		}
	}
	if _, stderr, _ := runCLI(t, append(base, "--merge", parts, "--compat", "pml")...); !strings.Contains(stderr, `other settings: --compat "strict", here "pml"`) {
		t.Errorf("merge under another convention: %q", stderr)
	}
	os.Remove(filepath.Join(parts, "partial-00001-of-00002.json"))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/2"}, "need --partial DIR"},
		{[]string{"--shard", "2/2", "--partial", parts}, "want 0 ≤ I < N"},
		{[]string{"--shard", "x", "--partial", parts}, "want I/N"},
		{[]string{"--shard", "0/2", "--partial", parts, "--out", "x.json"}, "give them to the merge"},
		{[]string{"--executor", "local", "--partial", parts}, "needs --shards N"},
		{[]string{"--executor", "pbs", "--shards", "2", "--partial", parts}, "want local or slurm"},
		{[]string{"--shards", "2"}, "go with --executor or --shard"},
		{[]string{"--executor", "local", "--shards", "2", "--partial", parts, "--merge", parts}, "use one"},
		{[]string{"--merge", parts}, "shard(s) 1 of 2 missing"},
		{[]string{"--merge", filepath.Join(dir, "none")}, "does not exist"},
	}
	for _, tc := range cases {
		_, stderr, code := runCLI(t, append(base, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	_, stderr, code := runCLI(t, "eval", "--emb", other, "--labels", lab, "--metrics", "R@1,MAP@R", "-q", "--shard", "1/2", "--partial", parts)
	if code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, _ := runCLI(t, append(base, "--merge", parts)...); !strings.Contains(stderr, "other data: queries differs") {
		t.Errorf("merge of another input's shard: %q", stderr)
	}
}

// The local executor runs the shards as processes of the dmlbench binary
// and merges them; run again, it skips the shards that are done.
func TestEvalLocalExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "dmlbench")
	if b, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	emb, lab := writeShardData(t, dir, 3000, 8)
	args := []string{"eval", "--emb", emb, "--labels", lab, "--metrics", "R@1,MAP@R,mAP@1000", "-q"}
	single := filepath.Join(dir, "single.json")
	if b, err := exec.Command(bin, append(args, "--out", single)...).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	parts := filepath.Join(dir, "parts")
	for run := range 2 {
		merged := filepath.Join(dir, "merged.json")
		cmd := exec.Command(bin, append(args, "--executor", "local", "--shards", "4", "--parallel", "2", "--partial", parts, "--out", merged)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v %s", err, out)
		}
		if want := []string{"0 done, running 4", "4 done, running 0"}[run]; !strings.Contains(string(out), want) {
			t.Errorf("run %d: %s", run, out)
		}
		if a, b := withoutTimings(t, single), withoutTimings(t, merged); a != b {
			t.Fatalf("run %d: merged differs:\n%s\nsingle:\n%s", run, b, a)
		}
	}
	st, err := exec.Command(bin, "eval", "status", parts).CombinedOutput()
	if err != nil || strings.Count(string(st), "done") != 4 || !strings.Contains(string(st), "merge       ready") {
		t.Errorf("status: %v\n%s", err, st)
	}
	out, err := exec.Command(bin, "eval", "merge", parts, "--format", "json").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"MAP@R"`) {
		t.Errorf("eval merge: %v\n%s", err, out)
	}
}

// eval --gallery-sizes writes a distractor curve (table, JSON) that plot
// distractors draws; bad sizes are refused with one line.
func TestEvalGallerySizesCLI(t *testing.T) {
	dir := t.TempDir()
	emb, lab := writeShardData(t, dir, 900, 6)
	q := []string{"eval", "--query-emb", emb, "--query-labels", lab, "--gallery-emb", emb, "--gallery-labels", lab, "-q", "--metrics", "R@1,MAP@R"}
	curve := filepath.Join(dir, "curve.json")
	out, stderr, code := runCLI(t, append(q, "--gallery-sizes", "900", "--out", curve, "--resamples", "50")...)
	if code != 0 || !strings.Contains(out, "class-bootstrap interval") || !strings.Contains(out, "900") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	if _, stderr, code := runCLI(t, "plot", "distractors", curve, "--out", filepath.Join(dir, "d.png")); code != 0 {
		t.Fatalf("plot distractors: %s", stderr)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--gallery-sizes", "1e9"}},
		{[]string{"--gallery-sizes", "1.5"}},
		{[]string{"--gallery-sizes", "900", "--format", "latex"}},
	} {
		if _, stderr, code := runCLI(t, append(q, tc.args...)...); code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d %q", tc.args, code, stderr)
		}
	}
}
