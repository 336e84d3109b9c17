package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSplitListWriteOutput(t *testing.T) {
	if got := SplitList(" a, ,b ;c,", ","); !slices.Equal(got, []string{"a", "b ;c"}) {
		t.Fatalf("SplitList: %q", got)
	}
	var stdout bytes.Buffer
	if err := WriteOutput(&stdout, "-", []byte("x\n")); err != nil || stdout.String() != "x\n" {
		t.Fatalf("stdout: %q %v", stdout.String(), err)
	}
	p := filepath.Join(t.TempDir(), "t.md")
	if err := WriteOutput(&stdout, p, []byte("y\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "y\n" || stdout.String() != "x\n" {
		t.Fatalf("file: %q %v", b, err)
	}
	if _, err := LoadFinished([]string{t.TempDir()}, false); err == nil {
		t.Fatal("a directory with no runs loaded")
	}
}
