package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/dmlbench/dmlbench/"

// allowed are the imports that climb, each with the reason it is kept.
var allowed = map[[2]string]string{}

// TestLayering fails when a package imports one of a higher layer (Layers)
// under any of the build tag sets, or is in no layer.
func TestLayering(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	used := map[[2]string]bool{}
	for _, tags := range []string{"", "faiss,cuda,openblas", "nogpu,purego"} {
		cmd := exec.Command(gobin, "list", "-e", "-tags", tags, "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...")
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v\n%s", tags, err, stderr.String())
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			pkg := strings.TrimPrefix(f[0], module)
			from, ok := Of(pkg)
			if !ok {
				t.Errorf("package %s is in no layer: add it to Layers", pkg)
				continue
			}
			for _, imp := range f[1:] {
				if !strings.HasPrefix(imp, module) {
					continue
				}
				dep := strings.TrimPrefix(imp, module)
				to, ok := Of(dep)
				if !ok || to <= from {
					continue // a package in no layer is reported as a package
				}
				edge := [2]string{pkg, dep}
				if _, ok := allowed[edge]; ok {
					used[edge] = true
					continue
				}
				t.Errorf("%s (layer %d) imports %s (layer %d) under tags %q: an import may not climb", pkg, from, dep, to, tags)
			}
		}
	}
	for edge := range allowed {
		if !used[edge] {
			t.Errorf("%s no longer imports %s: remove the allowance", edge[0], edge[1])
		}
	}
}

func TestOf(t *testing.T) {
	for pkg, want := range map[string]int{
		"internal/mat32": 0, "internal/parallel": 0, "knn": 1, "knn/gpu": 1, "knn/faissc": 0, "clustering": 2, "metrics": 3,
		"trainers/model": 4, "trainers/param": 0, "experiments/tune": 5, "experiments/tune/search": 0, "reports/plots": 5, "cmd/dmlbench": 6,
	} {
		if got, ok := Of(pkg); !ok || got != want {
			t.Errorf("Of(%q) = %d, %v; want %d", pkg, got, ok, want)
		}
	}
	if _, ok := Of("knnx"); ok {
		t.Error("knnx matched knn")
	}
}
