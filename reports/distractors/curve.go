package distractors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports/compare"
	"strconv"
	"strings"
)

// Options configure Run.
type Options struct {
	// Sizes are the gallery sizes, each at least the number of relevant
	// items and at most the gallery's; sorted ascending by Run.
	Sizes []int
	// Seed orders the distractors: the subset of size s is the relevant
	// items and the first s − R distractors of one seeded permutation.
	Seed uint64
	// Interval configures the class-bootstrap intervals.
	Interval compare.Options
}

// Point is the evaluation at one gallery size.
type Point struct {
	Size        int            `json:"gallery"`
	Distractors int            `json:"distractors"`
	Metrics     record.Metrics `json:"metrics"`
	Lo          record.Metrics `json:"lo"`
	Hi          record.Metrics `json:"hi"`
	Seconds     float64        `json:"seconds"`
}

// Curve is the metrics against gallery size.
type Curve struct {
	Queries     int                `json:"queries"`
	Relevant    int                `json:"relevant"`
	Distractors int                `json:"distractors"`
	Keys        []string           `json:"keys"`
	Convention  metrics.Convention `json:"convention"`
	Level       float64            `json:"level"`
	Resamples   int                `json:"resamples"`
	Seed        uint64             `json:"seed"`
	Points      []Point            `json:"points"`
	Version     string             `json:"version"`
}

// Run evaluates the queries of in (query/gallery) against each gallery
// size of opt with the k-NN metrics of eopt.
func Run(ctx context.Context, in metrics.Input, eopt metrics.Options, opt Options) (*Curve, error) {
	if in.Gallery == nil {
		return nil, fmt.Errorf("%w: gallery sizes need a separate gallery (--query-*/--gallery-*): leave-one-out has no distractors", metrics.ErrInput)
	}
	relevant, distractors := split(in.Labels, in.GalleryLabels)
	sizes := slices.Clone(opt.Sizes)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	for _, s := range sizes {
		if s < len(relevant) || s > in.Gallery.Rows {
			return nil, fmt.Errorf("%w: gallery size %d: want %d (the items of the queries' classes) to %d (the gallery)", metrics.ErrInput, s, len(relevant), in.Gallery.Rows)
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x64697374))
	rng.Shuffle(len(distractors), func(i, j int) { distractors[i], distractors[j] = distractors[j], distractors[i] })
	eopt.PerQuery = true
	c := &Curve{Queries: in.Emb.Rows, Relevant: len(relevant), Distractors: len(distractors),
		Level: opt.Interval.Level, Resamples: opt.Interval.Resamples, Seed: opt.Seed}
	for _, s := range sizes {
		rows := append(slices.Clone(relevant), distractors[:s-len(relevant)]...)
		slices.Sort(rows) // the gallery's own order: ties go to the same rows
		sub := in
		g, gl := subset(*in.Gallery, in.GalleryLabels, rows)
		sub.Gallery, sub.GalleryLabels = &g, gl
		res, err := metrics.Evaluate(ctx, sub, eopt)
		if err != nil {
			return nil, fmt.Errorf("gallery size %d: %w", s, err)
		}
		p := Point{Size: s, Distractors: s - len(relevant), Metrics: record.Metrics(res.Metrics),
			Lo: record.Metrics{}, Hi: record.Metrics{}, Seconds: res.Timings["total"]}
		for _, k := range res.PerQuery.Keys {
			lo, hi, _, ok, err := compare.Interval(res.PerQuery, k, opt.Interval)
			if err != nil {
				return nil, err
			}
			if ok {
				p.Lo[k], p.Hi[k] = lo, hi
			}
		}
		c.Keys, c.Convention, c.Version = res.PerQuery.Keys, res.Convention, res.Version
		c.Points = append(c.Points, p)
	}
	return c, nil
}

// split returns the gallery rows whose label is a query's (relevant) and
// the others (distractors), each ascending.
func split(qLabels, gLabels []int32) (relevant, distractors []int) {
	asked := map[int32]bool{}
	for _, y := range qLabels {
		asked[y] = true
	}
	for i, y := range gLabels {
		if asked[y] {
			relevant = append(relevant, i)
		} else {
			distractors = append(distractors, i)
		}
	}
	return relevant, distractors
}

// subset copies rows of g and their labels.
func subset(g mat32.Matrix, labels []int32, rows []int) (mat32.Matrix, []int32) {
	out := mat32.Matrix{Rows: len(rows), Cols: g.Cols, Data: make([]float32, 0, len(rows)*g.Cols)}
	lab := make([]int32, len(rows))
	for i, r := range rows {
		out.Data = append(out.Data, g.Data[r*g.Cols:(r+1)*g.Cols]...)
		lab[i] = labels[r]
	}
	return out, lab
}

// ParseSizes reads a comma-separated list of gallery sizes, each a whole
// number of items in any float notation (1e5).
func ParseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 1 || v != float64(int(v)) {
			return nil, usage.Errorf("--gallery-sizes: %q is not a whole number of items", f)
		}
		sizes = append(sizes, int(v))
	}
	return sizes, nil
}
