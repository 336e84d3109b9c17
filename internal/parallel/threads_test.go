package parallel

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pending are files that still read the thread count themselves; each is
// a one-line change to Threads(0) in a package with an owner of its own.
var pending = map[string]bool{
	"knn/bench_test.go": true, "knn/faissc/faissc.go": true, "metrics/retrieval.go": true,
	"trainers/model/cnn_ops.go": true, "trainers/adam.go": true, "internal/blas32/gemm.go": true,
}

// TestOneThreadCount: no Go file of the module but this package reads
// runtime.GOMAXPROCS(0) (pending aside, and no new one joins them).
func TestOneThreadCount(t *testing.T) {
	root := "../.."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/parallel/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "runtime.GOMAXPROCS(0)") && !pending[rel] {
			t.Errorf("%s reads runtime.GOMAXPROCS(0): use parallel.Threads(0)", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
