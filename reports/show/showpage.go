// Package show builds `dmlbench show`'s page: one self-contained HTML
// file (images inlined as data URIs, no script) with the worst queries and
// a random sample of queries of an evaluation, each with its top-k
// retrievals marked correct or incorrect, its AP@R (MAP@R's per-query
// term) and its class's R@1.
package show

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
)

// Options configure Build.
type Options struct {
	Worst, Random int    // queries shown in each section
	K             int    // retrievals shown per query
	Seed          uint64 // seed of the random sample
	Distance      string // as metrics.Options.Distance
	Convention    metrics.Convention
	Title         string
	// Queries, if set, are the rows shown (in this order) instead of the
	// worst and random ones.
	Queries []int
}

// Images give the picture of a row as a data URI ("" when there is
// none), or why it cannot. Build asks only for the rows it shows.
type Images func(row int) (template.URL, error)

// Hit is one retrieved gallery item.
type Hit struct {
	Row     int
	Label   string
	Dist    string // "d 0.93" (Euclidean), "1−cos 0.14", "q·x 0.86"
	Correct bool
	Img     template.URL
}

// Query is one query of the page.
type Query struct {
	Row      int
	Label    string
	APR      float64 // AP@R: the query's term of MAP@R
	ClassR1  float64 // R@1 of the query's class (its queries' mean)
	Img      template.URL
	Hits     []Hit
	Position string // "worst 3 of 8", "random 2 of 8"
}

// Page is everything the HTML shows.
type Page struct {
	Title       string
	Summary     string
	Legend      string
	Worst       []Query
	Random      []Query
	RandomSeed  uint64
	Images      bool
	K           int
	QueryCount  int
	WorstCount  int
	RandomCount int
}

// Build scores in (R@1 and MAP@R, per query) and assembles the page.
// qImg and gImg give the pictures of query and gallery rows (nil: labels
// and distances only); for leave-one-out both are the rows of in.Emb.
func Build(ctx context.Context, in metrics.Input, opt Options, qImg, gImg Images) (*Page, error) {
	if opt.K < 1 || opt.Worst < 0 || opt.Random < 0 || (opt.Worst+opt.Random == 0 && len(opt.Queries) == 0) {
		return nil, fmt.Errorf("show: need k ≥ 1 and at least one query to show (worst %d, random %d, k %d)", opt.Worst, opt.Random, opt.K)
	}
	res, err := metrics.Evaluate(ctx, in, metrics.Options{Metrics: []string{"R@1", "MAP@R"}, Distance: opt.Distance,
		Convention: opt.Convention, PerQuery: true})
	if err != nil {
		return nil, err
	}
	pq := res.PerQuery
	apr, r1 := pq.Column("MAP@R"), pq.Column("R@1")
	ids, classR1 := pq.ClassMeans(indexOf(pq.Keys, "R@1"))
	byClass := map[int32]float64{}
	for i, y := range ids {
		byClass[y] = classR1[i]
	}
	worst := diverseWorst(pq, apr, r1, opt.Worst, opt.Seed)
	rng := rand.New(rand.NewPCG(opt.Seed, 0))
	perm := rng.Perm(len(pq.Index))
	sample := perm[:min(opt.Random, len(perm))]
	sort.Ints(sample)
	if opt.Queries != nil {
		pos := map[int]int{}
		for i, r := range pq.Index {
			pos[r] = i
		}
		worst, sample = nil, nil
		for _, r := range opt.Queries {
			i, ok := pos[r]
			if !ok {
				return nil, fmt.Errorf("show: row %d is not a query (the queries are rows 0–%d that have a class mate)", r, len(in.Labels)-1)
			}
			sample = append(sample, i)
		}
	}
	galleryLabels := in.Labels
	if in.Gallery != nil {
		galleryLabels = in.GalleryLabels
	}
	label := func(v int32) string { // as metrics names classes
		if int(v) < len(in.ClassNames) && v >= 0 {
			return in.ClassNames[v]
		}
		return strconv.Itoa(int(v))
	}
	build := func(sel []int, what string) ([]Query, error) {
		rows := make([]int, len(sel))
		for i, s := range sel {
			rows[i] = pq.Index[s]
		}
		if len(rows) == 0 {
			return nil, nil
		}
		nb, err := metrics.Neighbours(ctx, in, opt.Distance, rows, opt.K)
		if err != nil {
			return nil, err
		}
		out := make([]Query, len(sel))
		for i, s := range sel {
			q := Query{Row: rows[i], Label: pq.Labels[s], APR: apr[s], ClassR1: byClass[pq.Class[s]],
				Position: fmt.Sprintf("%s %d of %d", what, i+1, len(sel))}
			if qImg != nil {
				if q.Img, err = qImg(rows[i]); err != nil {
					return nil, err
				}
			}
			for j, id := range nb.IDsOf(i) {
				h := Hit{Row: int(id), Label: label(galleryLabels[id]), Dist: shownDistance(opt.Distance, nb.DistOf(i)[j]),
					Correct: galleryLabels[id] == in.Labels[rows[i]]}
				if gImg != nil {
					if h.Img, err = gImg(int(id)); err != nil {
						return nil, err
					}
				}
				q.Hits = append(q.Hits, h)
			}
			out[i] = q
		}
		return out, nil
	}
	p := &Page{Title: opt.Title, RandomSeed: opt.Seed, Images: qImg != nil, K: opt.K, QueryCount: len(pq.Index)}
	if p.Worst, err = build(worst, "worst"); err != nil {
		return nil, err
	}
	what := "random"
	if opt.Queries != nil {
		what = "chosen"
	}
	if p.Random, err = build(sample, what); err != nil {
		return nil, err
	}
	p.WorstCount, p.RandomCount = len(p.Worst), len(p.Random)
	p.Summary = fmt.Sprintf("%d queries, gallery of %d, %d classes, convention %s, distance %s: R@1 %.2f %%, MAP@R %.2f %%",
		res.Queries, res.Gallery, res.Classes, res.Convention, distanceName(opt.Distance), 100*res.Metrics["R@1"], 100*res.Metrics["MAP@R"])
	return p, nil
}

// diverseWorst picks the n worst queries, at most one per class until
// every class has given one: each class's worst query (lowest AP@R, then
// lowest R@1), the classes ordered by that query's AP@R, then by the
// class's mean AP@R (a class that fails throughout first), then by a
// seeded random order rather than by row. Queries without AP@R (no class
// mate) are not ranked. It returns indices into pq's queries.
func diverseWorst(pq *metrics.QueryValues, apr, r1 []float64, n int, seed uint64) []int {
	tie := rand.New(rand.NewPCG(seed, 1)).Perm(len(pq.Index))
	classSum, classN := map[int32]float64{}, map[int32]int{}
	var ranked []int
	for i := range pq.Index {
		if !math.IsNaN(apr[i]) {
			ranked = append(ranked, i)
			classSum[pq.Class[i]] += apr[i]
			classN[pq.Class[i]]++
		}
	}
	classMean := func(i int) float64 { return classSum[pq.Class[i]] / float64(classN[pq.Class[i]]) }
	sort.SliceStable(ranked, func(a, b int) bool {
		i, j := ranked[a], ranked[b]
		switch {
		case apr[i] != apr[j]:
			return apr[i] < apr[j]
		case r1[i] != r1[j]:
			return r1[i] < r1[j]
		case classMean(i) != classMean(j):
			return classMean(i) < classMean(j)
		}
		return tie[i] < tie[j]
	})
	var out, rest []int
	seen := map[int32]bool{}
	for _, i := range ranked {
		if seen[pq.Class[i]] {
			rest = append(rest, i)
			continue
		}
		seen[pq.Class[i]] = true
		out = append(out, i)
	}
	out = append(out, rest...)
	return out[:min(n, len(out))]
}

// shownDistance turns the search's value (squared L2, or an inner
// product, of normalised rows under cosine) into the distance a reader
// expects.
func shownDistance(distance string, v float32) string {
	// Three decimals for every distance, so a column of them aligns.
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	switch strings.ToLower(distance) {
	case "cosine", "cos":
		return "1−cos " + f(1-float64(v))
	case "ip", "dot":
		return "q·x " + f(float64(v))
	}
	return "d " + f(math.Sqrt(float64(v)))
}

func distanceName(d string) string {
	if d == "" {
		return "euclidean"
	}
	return d
}

func indexOf(keys []string, k string) int {
	for j, x := range keys {
		if x == k {
			return j
		}
	}
	return -1
}

// PixelImages renders rows of x as PNG data URIs; shape is channels-first
// [C, H, W] (C = 1 or 3) with values in [0, 1]. invert draws 1 as black
// (Omniglot's ink).
func PixelImages(x mat32.Matrix, shape []int, invert bool) (Images, error) {
	if len(shape) != 3 || (shape[0] != 1 && shape[0] != 3) || shape[0]*shape[1]*shape[2] != x.Cols {
		return nil, fmt.Errorf("show: image shape %v does not match %d values per row", shape, x.Cols)
	}
	c, h, w := shape[0], shape[1], shape[2]
	return func(row int) (template.URL, error) {
		px := x.Row(row)
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				var v [3]uint8
				for ch := 0; ch < 3; ch++ {
					f := px[min(ch, c-1)*h*w+y*w+xx]
					if invert {
						f = 1 - f
					}
					v[ch] = uint8(math.Round(255 * math.Max(0, math.Min(1, float64(f)))))
				}
				img.SetNRGBA(xx, y, color.NRGBA{v[0], v[1], v[2], 255})
			}
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			return "", err
		}
		return dataURI("image/png", b.Bytes()), nil
	}, nil
}

// FileImages inlines the image files paths[row] (PNG, JPEG, GIF, WebP,
// BMP, as sniffed from their bytes). Every file must exist (checked at
// once); a file is read only when its row is shown, so a page of a few
// dozen pictures costs a few dozen reads whatever the list's length.
func FileImages(paths []string) (Images, error) {
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("show: image of row %d: %w", i, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("show: image of row %d: %s is not a file", i, p)
		}
	}
	return func(row int) (template.URL, error) {
		p := paths[row]
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("show: image of row %d: %w", row, err)
		}
		typ := http.DetectContentType(b)
		switch typ {
		case "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp":
		default:
			return "", fmt.Errorf("show: %s (row %d) is %s, not an image", p, row, typ)
		}
		return dataURI(typ, b), nil
	}, nil
}

// ReadImageList reads one image path per line (blank lines skipped),
// relative to the list's folder unless absolute.
func ReadImageList(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		p := strings.TrimSpace(l)
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		out = append(out, p)
	}
	return out, nil
}

func dataURI(typ string, b []byte) template.URL {
	// Trusted: the bytes are base64, the type one of the image types above.
	return template.URL("data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(b))
}

// WriteHTML writes the page.
func (p *Page) WriteHTML(w io.Writer) error { return page.Execute(w, p) }

var page = template.Must(template.New("show").Funcs(template.FuncMap{
	"pct": func(x float64) string { return pct(x) },
	"inc": func(i int) int { return i + 1 },
}).Parse(pageHTML))

func pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return strconv.FormatFloat(100*x, 'f', 1, 64) + " %"
}
