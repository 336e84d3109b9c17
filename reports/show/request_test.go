package show

import (
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestRequestPrepare(t *testing.T) {
	ok := Request{Worst: 8, Random: 8, Top: 8, Distance: "euclidean", Compat: "strict", Figure: FigureFlags{Format: "html", Out: "p.html"}}
	if _, err := ok.Prepare(); err != nil {
		t.Fatal(err)
	}
	fig := ok
	fig.Figure = FigureFlags{Format: "svg", Out: "f.svg", Width: "column", DPI: 300}
	p, err := fig.Prepare()
	if err != nil || p.opt.Random != 0 || !p.figure {
		t.Fatalf("a figure without --random: %+v, %v; want no random queries", p.opt, err)
	}
	for _, c := range []struct {
		edit func(*Request)
		want string
	}{
		{func(r *Request) { r.Compat = "stric" }, "--compat"},
		{func(r *Request) { r.Distance = "cosin" }, "--distance"},
		{func(r *Request) { r.Top = 0 }, "top"},
	} {
		r := ok
		c.edit(&r)
		if _, err := r.Prepare(); !usage.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want a usage error with %q", err, c.want)
		}
	}
}
