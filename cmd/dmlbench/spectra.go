package main

import (
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/reports/plots"
)

func addSpectra() {
	register(&cli.Command{
		Name:        "spectra",
		Usage:       "singular-value spectrum and ρ spectral decay of an embedding file",
		UsageText:   "dmlbench spectra --emb E.npy [--labels L.npy] [--out spectrum.png] [options]",
		Description: helpText("spectra"),
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

func spectraAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("spectra takes no positional arguments (got %q); use --emb", c.Args().First())
	}
	format, mode, m, top := c.String("format"), c.String("normalize"), c.Int("m"), c.Int("top")
	if err := plots.CheckSpectra(c.String("emb"), format, mode, m, top); err != nil {
		return err
	}
	sp, err := plots.LoadEmbeddingSpectrum(c.String("emb"), c.String("labels"), true)
	if err != nil {
		return err
	}
	x, sv := sp.X, sp.Singular
	res, rho, err := sp.Summary(m)
	if err != nil {
		return err
	}
	if out := c.String("out"); out != "" {
		opt, err := spectraFigureOptions(c, c.String("title"), c.String("caption"), plots.SpectrumYLabel(mode))
		if err != nil {
			return err
		}
		if err := sp.Save(out, mode, top, opt); err != nil {
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
