package commentlint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// banned are the comment phrases the test rejects, each with the reason
// printed on a match.
var banned = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)\bseeds? 0\d\d\b|\bthe seed's\b|\bseed papers?\b`), "cite papers by authors and year (docs/references.md)"},
	{regexp.MustCompile(`(?i)(^|[^#\w])issues? \d+\b|\bthe issue\b`), "the project's issues belong in commit messages"},
	{regexp.MustCompile(`(?i)\bpreviously\b|\bused to (be|drop|give|take|read|write|run)\b|\bno longer (needed|used)\b`), "history belongs in commit messages"},
	{regexp.MustCompile(`(?i)\b(before|after) (this|the) (change|fix|rewrite|refactor)\b`), "history belongs in commit messages"},
	{regexp.MustCompile(`(?i)\bengineer\b`), "say what the code does, not who asked for it"},
}

func TestCommentsCarryNoHistory(t *testing.T) {
	files := 0
	walkGoFiles(t, parser.ParseComments, func(rel string, fset *token.FileSet, f *ast.File) {
		files++
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, b := range banned {
					if m := b.re.FindString(c.Text); m != "" {
						t.Errorf("%s:%d: comment says %q: %s", rel, fset.Position(c.Pos()).Line, strings.TrimSpace(m), b.why)
					}
				}
			}
		}
	})
	if files < 100 {
		t.Fatalf("read only %d Go files", files)
	}
}

// walkGoFiles parses every Go file of the repository (testdata, hidden
// and output directories left out) with mode and hands each to visit with
// its path from the repository root.
func walkGoFiles(t *testing.T, mode parser.Mode, visit func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "out" || name == "runs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		visit(rel, fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
