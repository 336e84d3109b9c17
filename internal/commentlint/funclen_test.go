package commentlint

import (
	"go/ast"
	"go/token"
	"testing"
)

// maxFuncLines is the longest function (declaration or literal, first
// line to closing brace) the project keeps: a longer one is split where
// its steps are.
const maxFuncLines = 120

func TestNoFunctionOver120Lines(t *testing.T) {
	funcs := 0
	walkGoFiles(t, 0, func(rel string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "a function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, name = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			funcs++
			start, end := fset.Position(n.Pos()).Line, fset.Position(body.End()).Line
			if lines := end - start + 1; lines > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines (at most %d)", rel, start, name, lines, maxFuncLines)
			}
			return true
		})
	})
	if funcs < 1000 {
		t.Fatalf("read only %d functions", funcs)
	}
}
