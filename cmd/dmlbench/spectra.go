package main

import (
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/reports/plots"
	"github.com/dmlbench/dmlbench/spectra"
)

func init() {
	register(&cli.Command{
		Name:      "spectra",
		Usage:     "singular-value spectrum and ρ spectral decay of an embedding file",
		UsageText: "dmlbench spectra --emb E.npy [--labels L.npy] [--out spectrum.png] [options]",
		Description: `Computes the singular values of the (uncentred) N×D embedding matrix and prints
ρ@m = KL(U ‖ s/Σs) (Roth et al. 2020, §5; docs/metrics.md): 0 for a flat spectrum, larger
for a stronger decay (a more compressed embedding). With --out it plots the sorted,
normalised spectrum on a log scale; with --labels also the class-averaged spectrum
(Roth et al. 2020 supp. §E, Fig. 11) as a second curve.

Examples:
   dmlbench spectra --emb runs/margin-s0/test_emb.npy
   dmlbench spectra --emb out/px/emb.npy --labels out/px/labels.npy --out spectrum.png --top 35
   dmlbench spectra --emb docs/examples/query-gallery/gallery.npz:embeddings --m 2 --format json`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "emb", Usage: "embeddings: `FILE`.npy or FILE.npz:key (required)"},
			&cli.StringFlag{Name: "labels", Usage: "labels (adds the class-averaged spectrum)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "plot `FILE` (.png, .pdf, .svg, .eps, .jpg or .tif)"},
			&cli.IntFlag{Name: "m", Value: 1, Usage: "ρ@m drops the m−1 largest singular values"},
			&cli.StringFlag{Name: "normalize", Value: "sum", Usage: "plot normalisation: sum | max | none"},
			&cli.IntFlag{Name: "top", Usage: "plot the first N values (0: all)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text | json (ρ and the singular values)"},
			&cli.StringFlag{Name: "title", Value: "singular value spectrum", Usage: "figure title (\"\" draws none)"},
			&cli.StringFlag{Name: "caption", Usage: "a line under the figure (N, D and ρ are printed, not drawn, unless given here)"},
		}, spectraFigureFlags()...),
		Action: spectraAction,
	})
}

// spectraResult is the JSON output of `dmlbench spectra --format json`.
type spectraResult struct {
	N        int       `json:"n"`
	Dim      int       `json:"dim"`
	M        int       `json:"m"`
	Rho      *float64  `json:"rho"` // null when infinite (rank-deficient)
	Singular []float64 `json:"singular_values"`
	PerClass []float64 `json:"per_class_spectrum,omitempty"`
	Classes  int       `json:"classes,omitempty"`
}

func spectraAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("spectra takes no positional arguments (got %q); use --emb", c.Args().First())
	}
	if c.String("emb") == "" {
		return usagef("spectra needs --emb FILE")
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usagef("--format must be text or json (got %q)", format)
	}
	mode := c.String("normalize")
	if !plots.ValidSpectrumNorm(mode) {
		return usagef("--normalize must be sum, max or none (got %q)", mode)
	}
	m, top := c.Int("m"), c.Int("top")
	if m < 1 {
		return usagef("--m must be ≥ 1 (got %d)", m)
	}
	if top < 0 {
		return usagef("--top must be ≥ 0")
	}
	sp, err := plots.LoadEmbeddingSpectrum(c.String("emb"), c.String("labels"), true)
	if err != nil {
		return err
	}
	x, sv := sp.X, sp.Singular
	rho, err := spectra.Rho(sv, m)
	if err != nil {
		return err
	}
	res := spectraResult{N: x.Rows, Dim: x.Cols, M: m, Singular: sv, PerClass: sp.PerClass}
	if sp.PerClass != nil {
		res.Classes = sp.Classes
	}
	if !math.IsInf(rho, 0) {
		res.Rho = &rho
	}
	if out := c.String("out"); out != "" {
		if err := spectraPlot(c, out, sp, mode, top); err != nil {
			return err
		}
		fmt.Fprintln(c.App.ErrWriter, "wrote", out)
	}
	if format == "json" {
		return record.EncodeJSON(c.App.Writer, res)
	}
	fmt.Fprintf(c.App.Writer, "rho@%d %s\n", m, spectraFmtRho(rho))
	if math.IsInf(rho, 0) {
		fmt.Fprintln(c.App.ErrWriter, "warning: ρ is infinite: the embedding is rank-deficient (a zero singular value)")
	}
	fmt.Fprintf(c.App.Writer, "n %d  dim %d  s_1 %.6g  s_min %.6g\n", x.Rows, x.Cols, sv[0], sv[len(sv)-1])
	return nil
}

func spectraFmtRho(r float64) string {
	if math.IsInf(r, 0) {
		return "+Inf"
	}
	return fmt.Sprintf("%.6f", r)
}

// spectraPlot draws the spectrum of sp and, with labels, its class-averaged
// spectrum as a second curve, normalised by mode, on a log y axis.
func spectraPlot(c *cli.Context, out string, sp *plots.EmbeddingSpectrum, mode string, top int) error {
	opt, err := spectraFigureOptions(c, c.String("title"), c.String("caption"), plots.SpectrumYLabel(mode))
	if err != nil {
		return err
	}
	all, err := plots.EmbeddingSpectrumSeries("all embeddings", sp.Singular, mode, top)
	if err != nil {
		return err
	}
	series := []plots.Series{all}
	if sp.PerClass != nil {
		pc, err := plots.EmbeddingSpectrumSeries(fmt.Sprintf("class-averaged (%d classes)", sp.Classes), sp.PerClass, mode, top)
		if err != nil {
			return err
		}
		series = append(series, pc)
	}
	return plots.SaveSeries(out, series, opt)
}
