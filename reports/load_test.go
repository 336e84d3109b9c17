package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRun(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

const okRun = `{"schema": 1, "dataset": "d", "method": {"loss": "margin"}, "seed": %s, "status": "done", "final": {"R@1": %s}}`

func run(seed, r1 string) string {
	return strings.Replace(strings.Replace(okRun, "%s", seed, 1), "%s", r1, 1)
}

// An unreadable run.json is left out with a warning naming it; the other
// runs are reported.
func TestLoadSkipsUnreadableRun(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "a", RunFile), run("0", "0.5"))
	bad := filepath.Join(dir, "b", RunFile)
	writeRun(t, bad, `{"schema": 1, "status": "do`)
	l, err := LoadRuns([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 1 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], bad) {
		t.Fatalf("%d runs, warnings %q", len(l.Runs), l.Warnings)
	}
}

// A fraction metric outside [0, 1] is refused as corrupt, not averaged.
func TestLoadRefusesImpossibleValues(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "a", RunFile), run("0", "5.0"))
	_, err := LoadRuns([]string{dir}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "R@1 = 5 is impossible") {
		t.Fatalf("R@1 = 5: %v", err)
	}
}

// The same run in two directories (a backup copy beside the original)
// is refused: it would double n.
func TestLoadRefusesDuplicateRuns(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "suite", "s0", RunFile), run("0", "0.5"))
	writeRun(t, filepath.Join(dir, "suite", "s1", RunFile), run("1", "0.6"))
	writeRun(t, filepath.Join(dir, "suite.bak", "s0", RunFile), run("0", "0.5"))
	_, err := LoadRuns([]string{dir}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "are the same run") || !strings.Contains(err.Error(), "suite.bak") {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := LoadRuns([]string{filepath.Join(dir, "suite")}, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
}
