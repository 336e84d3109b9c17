package show

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// Printed to PDF (Chromium's --print-to-pdf), no distance and no class
// label of a retrieval wraps: each "1−cos 0.123" and each label is on one
// line of the PDF's text. Skipped without chromium or pdftotext.
func TestPagePrintsWithoutWrapping(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (scripts/setup.sh installs it)")
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed (Debian: poppler-utils)")
	}
	p, html := omniglotPage(t, 4, 4, 8)
	dir := t.TempDir()
	page, pdf := filepath.Join(dir, "show.html"), filepath.Join(dir, "show.pdf")
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--no-pdf-header-footer", "--print-to-pdf="+pdf, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, lastLines(string(out), 10))
	}
	out, err := exec.Command("pdftotext", "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	hits := 0
	for _, q := range append(p.Worst, p.Random...) {
		hits += len(q.Hits)
	}
	if n := len(regexp.MustCompile(`1−cos [0-9]\.[0-9]{3}`).FindAllString(text, -1)); n != hits {
		t.Errorf("%d distances on one line in the printed page, want %d", n, hits)
	}
	for _, q := range p.Worst {
		for _, h := range q.Hits {
			if !strings.Contains(text, h.Label) {
				t.Errorf("label %q split in the printed page", h.Label)
			}
		}
	}
}
