package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tune spec's problems are written one per line, each naming the file,
// then one line that counts them (docs/external.md), as suite does.
func TestTuneSpecProblemsOnePerLine(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "t.yaml")
	spec := "dataset: synthetic\nsearch: random\nbudget: 2\nfolds: 2\nbogus: 3\nfixed: {epochs: 2}\nmethods:\n" +
		"  - {name: .a, loss: margin, space: {lr: {low: 1.0e-4, high: 1.0e-2}}}\n" +
		"  - {name: m, loss: margin, space: {lr: {low: 1.0e-4, high: 1.0e-2}}}\n" +
		"  - {name: M, loss: margin, space: {lr: {low: 1.0e-4, high: 1.0e-2}}}\n"
	if err := os.WriteFile(f, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "tune", f, "--dry-run")
	if code == 0 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	want := []string{`unknown key "bogus"`, `name ".a" must be letters`, "methods m and M differ only in case"}
	if len(lines) != len(want)+1 {
		t.Fatalf("stderr %q: want %d problem lines and a count", errs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], "tune "+f+": ") || !strings.Contains(lines[i], w) {
			t.Errorf("line %d %q, want %q", i+1, lines[i], w)
		}
	}
	if last := lines[len(lines)-1]; last != "dmlbench: tune "+f+": 3 problems (listed above); nothing was run" {
		t.Errorf("last line %q", last)
	}
}
