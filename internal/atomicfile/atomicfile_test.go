package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteFileNewAndExisting(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "r.json")
	if err := WriteBytes(p, []byte("a")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v, mode %v; want 0644", err, st.Mode())
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(p, []byte("b")); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "b" || st.Mode().Perm() != 0o600 {
		t.Fatalf("rewrite: content %q mode %v; want \"b\" and the old mode 0600", b, st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", ".tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// A symbolic link is written through: the link stays, its target changes.
func TestWriteFileThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(dir, "chain.json")
	if err := os.Symlink(link, chain); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(chain, []byte("new")); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, chain} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symbolic link", l)
		}
	}
	st, _ := os.Stat(target)
	if b, _ := os.ReadFile(target); string(b) != "new" || st.Mode().Perm() != 0o640 {
		t.Fatalf("target: %q mode %v; want \"new\" 0640", b, st.Mode().Perm())
	}
	// a dangling link creates its target
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink("made.json", dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(dangling, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.json")); err != nil || string(b) != "x" {
		t.Fatalf("dangling link target: %q, %v", b, err)
	}
}

// Directories and device files are refused with a one-line message, and
// left as they are.
func TestWriteFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	err := WriteBytes(dir, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "is a directory") || strings.Contains(err.Error(), "rename") {
		t.Fatalf("directory: %v", err)
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		err := WriteBytes("/dev/null", []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "not a regular file (character device)") {
			t.Fatalf("/dev/null: %v", err)
		}
		if st, _ := os.Stat("/dev/null"); st.Mode()&os.ModeCharDevice == 0 {
			t.Fatal("/dev/null was replaced")
		}
	}
	link := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", link); err == nil {
		if err := WriteBytes(link, []byte("x")); err == nil {
			t.Fatal("a link to a device was written through")
		}
	}
}

// CleanTemps removes the temporary files of killed writers — only those of
// the names asked for, only when old enough — and nothing else.
func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".tmp-run.json-1", ".tmp-checkpoint.gob-2", "run.json", ".tmp-other"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := CleanTemps(dir, time.Hour, "run.json"); len(got) != 0 {
		t.Fatalf("removed fresh files: %v", got)
	}
	got, err := CleanTemps(dir, 0, "run.json")
	if err != nil || len(got) != 1 || filepath.Base(got[0]) != ".tmp-run.json-1" {
		t.Fatalf("removed %v (%v)", got, err)
	}
	if got, _ = CleanTemps(dir, 0); len(got) != 2 {
		t.Fatalf("all names: removed %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err != nil {
		t.Fatal("the target itself was removed")
	}
}

// A Create that is aborted leaves nothing; one that commits replaces the
// target whole.
func TestCreateCommitAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	f.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("abort left %d files", len(ents))
	}
	f, _ = CreateMode(p, 0o600)
	f.WriteString("whole")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "whole" || st.Mode().Perm() != 0o600 {
		t.Fatalf("content %q mode %v", b, st.Mode().Perm())
	}
	if f.Commit() == nil {
		t.Fatal("a second commit succeeded")
	}
}
