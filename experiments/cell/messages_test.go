package cell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trainer killed by a signal is named by the signal's name, not Go's
// description of it ("killed by signal killed").
func TestKilledBySignalNamed(t *testing.T) {
	_, err := execute(context.Background(), Job{Command: []string{"sh", "-c", "echo dying >&2; kill -9 $$"}, WorkDir: t.TempDir()})
	want := "command sh was killed by SIGKILL (signal 9): dying"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "signal killed") {
		t.Fatalf("%v, want %q", err, want)
	}
	if got := signalName(77); got != "signal 77" {
		t.Errorf("unnamed signal: %q", got)
	}
}

// An executable script without "#!" fails with exec format error: the
// message says what is missing.
func TestExecFormatErrorHintsAtShebang(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte("print('hello')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := execute(context.Background(), Job{Command: []string{"./train.py"}, WorkDir: dir})
	if err == nil || !strings.Contains(err.Error(), "command ./train.py: exec format error") || !strings.Contains(err.Error(), "#!/usr/bin/env python3") ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("%v", err)
	}
}
