package losses

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"testing"
)

// historyOrFiling matches what comments must not say: the filing numbers of
// the papers (the word seed and a number) instead of authors and year, and
// history instead of what the code does and why.
var historyOrFiling = regexp.MustCompile(`(?i)\bseeds? 00\d|\bthe seed's\b|\bseed papers?\b|\bthe issue\b|\bpreviously\b|\bno longer\b|_more_test\.go`)

// TestCommentsCitePapers checks the comments of the loss, miner, sampler,
// regulariser and test-time packages.
func TestCommentsCitePapers(t *testing.T) {
	for _, dir := range []string{".", "../miners", "../samplers", "../regularizers", "../testtime"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, name := range files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range f.Comments {
				for _, c := range g.List {
					if m := historyOrFiling.FindString(c.Text); m != "" {
						t.Errorf("%s: comment says %q: cite papers by author and year, describe what is, not its history", fset.Position(c.Pos()), m)
					}
				}
			}
		}
	}
}
