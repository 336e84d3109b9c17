package show

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// The worst queries are one per class while classes remain, in ascending
// AP@R.
func TestWorstAreDiverse(t *testing.T) {
	t.Parallel()
	p, _ := omniglotPage(t, 10, 0, 4)
	seen := map[string]bool{}
	for _, q := range p.Worst {
		if seen[q.Label] {
			t.Errorf("class %s shown twice among the 10 worst of 30 classes", q.Label)
		}
		seen[q.Label] = true
	}
}

// The figure: one picture per query and hit, the query framed black,
// each hit framed green when of the query's class and red (dashed)
// otherwise, no text when there are pictures; chosen queries in order.
func TestSaveFigure(t *testing.T) {
	t.Parallel()
	p, _ := omniglotPage(t, 3, 0, 5)
	dir := t.TempDir()
	svg := filepath.Join(dir, "f.svg")
	if err := p.SaveFigure(svg, FigureOptions{Width: ColumnWidth * vg.Inch}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(svg)
	s := string(b)
	if n := strings.Count(s, "<image"); n != 3*6 {
		t.Errorf("%d pictures, want 18", n)
	}
	green, red := 0, 0
	for _, q := range p.Worst {
		for _, h := range q.Hits {
			if h.Correct {
				green++
			} else {
				red++
			}
		}
	}
	frames := func(col string) int {
		return len(regexp.MustCompile(`stroke:`+col+`[;"]`).FindAllString(s, -1))
	}
	if g, r := frames("#009E73"), frames("#D55E00"); g != green || r != red {
		t.Errorf("frames: %d green, %d red; want %d and %d", g, r, green, red)
	}
	if strings.Contains(s, "<text") {
		t.Error("text in a figure with pictures")
	}
	for _, ext := range []string{"png", "pdf"} {
		if err := p.SaveFigure(filepath.Join(dir, "f."+ext), FigureOptions{}); err != nil {
			t.Errorf("%s: %v", ext, err)
		}
	}
	if err := p.SaveFigure(filepath.Join(dir, "f.html"), FigureOptions{}); err == nil {
		t.Error("an .html figure was accepted")
	}
}

// Chosen queries are shown in the order given; a row that is no query is
// an error.
func TestChosenQueries(t *testing.T) {
	t.Parallel()
	p, _ := omniglotPage(t, 1, 0, 2)
	rows := []int{p.Worst[0].Row, 7, 3}
	_, in := omniglotInput(t)
	q, err := Build(context.Background(), in, Options{Worst: 8, K: 2, Seed: 1, Distance: "cosine", Queries: rows}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Worst) != 0 || len(q.Random) != 3 || q.Random[0].Row != rows[0] || q.Random[1].Row != 7 || q.Random[2].Row != 3 {
		t.Errorf("chosen %v: got %d worst and %+v", rows, len(q.Worst), q.Random)
	}
	if _, err := Build(context.Background(), in, Options{K: 2, Queries: []int{1 << 20}}, nil, nil); err == nil {
		t.Error("row 1048576 accepted as a query")
	}
}
