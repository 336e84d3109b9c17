package show

import (
	"context"
	"fmt"
	"io"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/metrics"
)

// Request is the show command's settings: the queries shown, the
// ranking's distance and convention, the pictures of the rows, and the
// page or figure written to Out.
type Request struct {
	Worst, Random, Top int
	RandomSet          bool // --random was given (a figure shows no random queries unless asked)
	Seed               uint64
	Distance, Compat   string
	Figure             FigureFlags
	// Dataset, Split and Size, or Images: the rows' pictures (ImagesFor).
	Dataset, Images, Split string
	Size                   int
	// Emb, or QueryEmb against GalleryEmb: the files scored, for the title.
	Emb, QueryEmb, GalleryEmb string
	Out                       string
}

// Prepared is a checked request, ready for its input.
type Prepared struct {
	req    Request
	opt    Options
	fo     FigureOptions
	figure bool
}

// Prepare checks the request's settings (usage errors) before any input
// is read.
func (r Request) Prepare() (Prepared, error) {
	if err := CheckCounts(r.Worst, r.Random, r.Top); err != nil {
		return Prepared{}, err
	}
	conv, err := metrics.ParseConvention(r.Compat)
	if err != nil {
		return Prepared{}, usage.Errorf("--compat %q: %v", r.Compat, err)
	}
	if err := metrics.CheckDistance(r.Distance); err != nil {
		return Prepared{}, usage.Errorf("--distance: %v", err)
	}
	queries, fo, figure, err := r.Figure.Parse()
	if err != nil {
		return Prepared{}, err
	}
	random := r.Random
	if figure && (queries != nil || !r.RandomSet) {
		random = 0 // a figure shows the chosen or the worst queries
	}
	opt := Options{Worst: r.Worst, Random: random, K: r.Top, Queries: queries, Seed: r.Seed, Distance: r.Distance, Convention: conv}
	return Prepared{req: r, opt: opt, fo: fo, figure: figure}, nil
}

// Write ranks in, writes the page (or the figure) to the request's Out
// and says so on stdout (whose write errors the caller checks).
func (p Prepared) Write(ctx context.Context, in metrics.Input, stdout io.Writer) error {
	r := p.req
	imgs, err := ImagesFor(r.Dataset, r.Images, r.Split, r.Size, in.Emb.Rows, in.Gallery != nil)
	if err != nil {
		return err
	}
	opt := p.opt
	opt.Title = "dmlbench show: " + r.Emb
	if in.Gallery != nil {
		opt.Title = "dmlbench show: " + r.QueryEmb + " against " + r.GalleryEmb
	}
	page, err := Build(ctx, in, opt, imgs, imgs)
	if err != nil {
		return err
	}
	if p.figure {
		if err := page.SaveFigure(r.Out, p.fo); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d queries, top %d each\n", r.Out, len(page.Worst)+len(page.Random), page.K)
		return nil
	}
	if err := atomicfile.WriteFile(r.Out, func(w io.Writer) error { return page.WriteHTML(w) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d worst and %d random queries, top %d each\n", r.Out, len(page.Worst), len(page.Random), page.K)
	return nil
}
