package compare

import (
	"fmt"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/metrics"
)

// Files name the two embeddings A and B of one test set: Emb against
// Labels, or (query/gallery) QueryEmb and GalleryEmb against QueryLabels
// and GalleryLabels; each list holds A's file, then B's.
type Files struct {
	Emb                        []string
	Labels                     string
	QueryEmb, GalleryEmb       []string
	QueryLabels, GalleryLabels string
}

// QueryGallery reports whether f names query/gallery inputs.
func (f Files) QueryGallery() bool {
	return len(f.QueryEmb) > 0 || len(f.GalleryEmb) > 0 || f.QueryLabels != "" || f.GalleryLabels != ""
}

// Load reads A's and B's inputs and names them by their (query)
// embedding files; f must name two of each.
func (f Files) Load() ([2]metrics.Input, [2]string, error) {
	var ins [2]metrics.Input
	var names [2]string
	switch qg := f.QueryGallery(); {
	case qg && len(f.Emb) > 0:
		return ins, names, usage.Errorf("use either --emb/--labels or --query-*/--gallery-*, not both")
	case qg && (len(f.QueryEmb) != 2 || len(f.GalleryEmb) != 2 || f.QueryLabels == "" || f.GalleryLabels == ""):
		return ins, names, usage.Errorf("query/gallery mode needs --query-emb and --gallery-emb twice each (A, then B), --query-labels and --gallery-labels")
	case !qg && (len(f.Emb) != 2 || f.Labels == ""):
		return ins, names, usage.Errorf("compare needs --emb twice (A, then B) and --labels (got %d --emb)", len(f.Emb))
	}
	for i := range 2 {
		if !f.QueryGallery() {
			x, y, err := arrays.LoadPair(f.Emb[i], f.Labels, false)
			if err != nil {
				return ins, names, err
			}
			ins[i], names[i] = metrics.Input{Emb: x, Labels: y}, f.Emb[i]
			continue
		}
		x, _, err := arrays.LoadPair(f.QueryEmb[i], f.QueryLabels, true)
		if err != nil {
			return ins, names, err
		}
		g, _, err := arrays.LoadPair(f.GalleryEmb[i], f.GalleryLabels, false)
		if err != nil {
			return ins, names, err
		}
		if g.Cols != x.Cols {
			return ins, names, fmt.Errorf("%s has dimension %d but %s has dimension %d", f.QueryEmb[i], x.Cols, f.GalleryEmb[i], g.Cols)
		}
		ids, err := arrays.JointLabels(f.QueryLabels, f.GalleryLabels)
		if err != nil {
			return ins, names, err
		}
		ins[i], names[i] = metrics.Input{Emb: x, Labels: ids[0], Gallery: &g, GalleryLabels: ids[1]}, f.QueryEmb[i]
	}
	return ins, names, nil
}
