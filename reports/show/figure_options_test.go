package show

import (
	"slices"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestFigureFlags(t *testing.T) {
	q, fo, fig, err := FigureFlags{Format: "png", Out: "f.PNG", Queries: "3, 0", Width: "2.5", DPI: 150}.Parse()
	if err != nil || !fig || !slices.Equal(q, []int{3, 0}) || fo.Width != 2.5*vg.Inch || fo.DPI != 150 {
		t.Fatalf("%v %+v %v %v", q, fo, fig, err)
	}
	if _, _, fig, err := (FigureFlags{Format: "html", Width: "column"}).Parse(); fig || err != nil {
		t.Fatalf("page: %v %v", fig, err)
	}
	for _, f := range []FigureFlags{
		{Format: "html", QueriesSet: true},
		{Format: "gif", Out: "f.gif"},
		{Format: "pdf", Out: "f.png", Width: "column", DPI: 300},
		{Format: "pdf", Out: "f.pdf", Queries: "1,-2", Width: "column", DPI: 300},
		{Format: "pdf", Out: "f.pdf", Width: "wide", DPI: 300},
		{Format: "pdf", Out: "f.pdf", Width: "page", DPI: 5},
	} {
		if _, _, _, err := f.Parse(); !usage.Is(err) {
			t.Errorf("%+v: %v, want a usage error", f, err)
		}
	}
}

func TestCheckCountsImagesFor(t *testing.T) {
	if err := CheckCounts(8, 0, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][3]int{{-1, 8, 8}, {8, -1, 8}, {8, 8, 0}, {0, 0, 8}} {
		if err := CheckCounts(c[0], c[1], c[2]); !usage.Is(err) {
			t.Errorf("%v: %v", c, err)
		}
	}
	if im, err := ImagesFor("", "", "test", 0, 10, false); im != nil || err != nil {
		t.Fatalf("no pictures: %v %v", im, err)
	}
	for _, a := range []struct {
		ds, list, split string
		qg              bool
	}{{"omniglot", "l.txt", "test", false}, {"omniglot", "", "test", true}, {"omniglot", "", "tset", false}} {
		if _, err := ImagesFor(a.ds, a.list, a.split, 0, 10, a.qg); !usage.Is(err) {
			t.Errorf("%+v: %v", a, err)
		}
	}
}
