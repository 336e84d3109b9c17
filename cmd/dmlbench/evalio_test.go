package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// nanFixture has one item per class: dist_ratio is undefined (NaN).
func nanFixture(t *testing.T) (dir, emb, lab string) {
	dir = t.TempDir()
	emb, lab = filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	if err := arrays.SaveNPY(emb, mat32.Matrix{Rows: 6, Cols: 2, Data: []float32{0, 0, 0, 1, 5, 5, 5, 6, 9, 0, 9, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, []int32{0, 1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	return
}

// A NaN metric is null on stdout and in --out alike (one encoder).
func TestEvalOutNaNIsNull(t *testing.T) {
	dir, emb, lab := nanFixture(t)
	p := filepath.Join(dir, "r.json")
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--k", "1", "--format", "json", "--out", p, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"dist_ratio": null`) || string(b) != out {
		t.Fatalf("--out differs from stdout or NaN not null:\nstdout:\n%s\n--out:\n%s", out, b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Fatalf("new --out file has mode %v, want 0644", st.Mode().Perm())
	}
}

// --out refuses a directory or a device with one line, and writes through
// a symbolic link.
func TestEvalOutTargets(t *testing.T) {
	dir, emb, lab := fixtureFiles(t)
	args := []string{"eval", "--emb", emb, "--labels", lab, "--k", "1", "-q", "--out"}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, append(args, sub)...)
	if code != 1 || !strings.Contains(errs, "is a directory") || strings.Contains(errs, "rename") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("--out DIR: exit %d, %q", code, errs)
	}
	_, errs, code = runCLI(t, append(args, "/dev/null")...)
	if code != 1 || !strings.Contains(errs, "not a regular file") {
		t.Fatalf("--out /dev/null: exit %d, %q", code, errs)
	}
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, errs, code = runCLI(t, append(args, link)...); code != 0 {
		t.Fatalf("--out symlink: exit %d, %q", code, errs)
	}
	st, _ := os.Lstat(link)
	b, _ := os.ReadFile(real)
	rst, _ := os.Stat(real)
	if st.Mode()&os.ModeSymlink == 0 || !strings.Contains(string(b), `"R@1"`) || rst.Mode().Perm() != 0o600 {
		t.Fatalf("symlink replaced or target not written with its mode kept (link mode %v, target %v, %d bytes)", st.Mode(), rst.Mode().Perm(), len(b))
	}
}

// "7" in a .npy and "07" in a .txt are one class across query and gallery.
func TestEvalQueryGalleryMixedSources(t *testing.T) {
	dir := t.TempDir()
	x := mat32.Matrix{Rows: 4, Cols: 2, Data: []float32{0, 0, 0, 1, 5, 5, 5, 6}}
	qe, ge := filepath.Join(dir, "q.npy"), filepath.Join(dir, "g.npy")
	ql, gl := filepath.Join(dir, "ql.npy"), filepath.Join(dir, "gl.txt")
	for _, p := range []string{qe, ge} {
		if err := arrays.SaveNPY(p, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := arrays.SaveLabelsNPY(ql, []int32{7, 7, 3, 3}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gl, []byte("\xef\xbb\xbf07\n07\n03\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "eval", "--query-emb", qe, "--query-labels", ql, "--gallery-emb", ge, "--gallery-labels", gl,
		"--k", "1", "--metrics", "R@1", "--format", "json", "-q")
	if code != 0 || !strings.Contains(out, `"R@1": 1`) {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
}
