package plots

import (
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/spectra"
)

// EmbeddingSpectrum is what `dmlbench spectra` and `dmlbench plot spectrum
// --emb` compute from an embedding file: the singular values of the
// (uncentred) N×D matrix and, with labels, the class-averaged spectrum
// (Roth et al. 2020, supp. §E, Fig. 11; spectra.PerClass).
type EmbeddingSpectrum struct {
	// X is the embedding matrix read.
	X mat32.Matrix
	// Singular are the singular values of X, largest first (nil when not
	// asked for).
	Singular []float64
	// PerClass is the class-averaged spectrum (nil without labels);
	// Classes the number of classes in it and Skipped the all-zero classes
	// left out of the average.
	PerClass         []float64
	Classes, Skipped int
}

// LoadEmbeddingSpectrum reads the embeddings embPath (.npy or .npz:key)
// and computes their singular values when whole is set, and the
// class-averaged spectrum when labelsPath is not empty (the labels must
// pair with the rows, arrays.CheckPair).
func LoadEmbeddingSpectrum(embPath, labelsPath string, whole bool) (*EmbeddingSpectrum, error) {
	x, err := arrays.LoadEmbeddings(embPath)
	if err != nil {
		return nil, err
	}
	sp := &EmbeddingSpectrum{X: x}
	if whole {
		if sp.Singular, err = spectra.SingularValues(x); err != nil {
			return nil, err
		}
	}
	if labelsPath == "" {
		return sp, nil
	}
	labels, _, err := arrays.LoadLabels(labelsPath)
	if err != nil {
		return nil, err
	}
	if err := arrays.CheckPair(x, labels, embPath, labelsPath); err != nil {
		return nil, err
	}
	if sp.PerClass, sp.Skipped, err = spectra.PerClass(x, labels); err != nil {
		return nil, err
	}
	classes := map[int32]bool{}
	for _, l := range labels {
		classes[l] = true
	}
	sp.Classes = len(classes) - sp.Skipped
	return sp, nil
}

// EmbeddingSpectrumSeries is one spectrum of an embedding file as a curve:
// sorted and normalised by mode (NormalizeSpectrum: sum, max or none), the
// first top values (0: all), labelled label.
func EmbeddingSpectrumSeries(label string, sv []float64, mode string, top int) (Series, error) {
	norm, err := NormalizeSpectrum(sv, mode)
	if err != nil {
		return Series{}, err
	}
	return SpectrumSeries(label, norm, nil, top), nil
}

// SpectrumYLabel is the y-axis label of a spectrum normalised by mode,
// with scriptText's subscripts.
func SpectrumYLabel(mode string) string {
	switch mode {
	case "max":
		return "s_{i} / s_{1}"
	case "none":
		return "s_{i}"
	}
	return "s_{i} / Σ_{j} s_{j}"
}

// ValidSpectrumNorm reports whether mode is a spectrum normalisation that
// NormalizeSpectrum knows (sum, max or none).
func ValidSpectrumNorm(mode string) bool {
	return mode == "sum" || mode == "max" || mode == "none"
}

// SpectrumSummary is the result of `dmlbench spectra` (its JSON output):
// the matrix's shape, ρ@M of its singular values (null when infinite: a
// zero singular value) and, with labels, the class-averaged spectrum.
type SpectrumSummary struct {
	N        int       `json:"n"`
	Dim      int       `json:"dim"`
	M        int       `json:"m"`
	Rho      *float64  `json:"rho"`
	Singular []float64 `json:"singular_values"`
	PerClass []float64 `json:"per_class_spectrum,omitempty"`
	Classes  int       `json:"classes,omitempty"`
}

// Summary is the spectrum's SpectrumSummary with ρ@m (spectra.Rho),
// and ρ itself (+Inf for a rank-deficient matrix).
func (sp *EmbeddingSpectrum) Summary(m int) (SpectrumSummary, float64, error) {
	rho, err := spectra.Rho(sp.Singular, m)
	if err != nil {
		return SpectrumSummary{}, 0, err
	}
	res := SpectrumSummary{N: sp.X.Rows, Dim: sp.X.Cols, M: m, Singular: sp.Singular, PerClass: sp.PerClass}
	if sp.PerClass != nil {
		res.Classes = sp.Classes
	}
	if !math.IsInf(rho, 0) {
		res.Rho = &rho
	}
	return res, rho, nil
}

// Save draws the spectrum and, with labels, its class-averaged spectrum
// as a second curve into the figure file out with opt, normalised by
// mode and cut to top values.
func (sp *EmbeddingSpectrum) Save(out, mode string, top int, opt PlotOptions) error {
	all, err := EmbeddingSpectrumSeries("all embeddings", sp.Singular, mode, top)
	if err != nil {
		return err
	}
	series := []Series{all}
	if sp.PerClass != nil {
		pc, err := EmbeddingSpectrumSeries(fmt.Sprintf("class-averaged (%d classes)", sp.Classes), sp.PerClass, mode, top)
		if err != nil {
			return err
		}
		series = append(series, pc)
	}
	return SaveSeries(out, series, opt)
}
