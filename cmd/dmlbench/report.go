package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/experiments/tune"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
)

func addReport() {
	register(&cli.Command{
		Name:        "report",
		Usage:       "tabulate run.json files: mean ± std over seeds per method, best in bold, Δ and Welch t-test vs a baseline",
		UsageText:   "dmlbench report PATH... [--format markdown|latex|terminal|csv] [options]",
		Description: helpText("report"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "terminal", Usage: "markdown | latex | terminal | csv"},
			&cli.StringFlag{Name: "group-by", Usage: "run.json method or config keys forming a row, e.g. loss,miner (default: the method keys that differ)"},
			&cli.StringFlag{Name: "metrics", Value: strings.Join(metrics.ReportColumns(), ","), Usage: "comma-separated metric columns"},
			&cli.StringFlag{Name: "source", Value: "final", Usage: "which metrics of a run: final | best (best epoch) | initial (the untrained model)"},
			&cli.BoolFlag{Name: "raw", Usage: "show fraction metrics as fractions instead of percent"},
			&cli.StringFlag{Name: "baseline", Usage: "row `NAME` (as printed, e.g. margin/distance) to compare every row against"},
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "significance level of the † mark"},
			&cli.Float64Flag{Name: "ci", Usage: "confidence level of the intervals of the mean and of Δ, e.g. 0.95 (0: none)"},
			&cli.StringFlag{Name: "ci-method", Value: reports.CIAuto, Usage: "auto (a t-interval below 20 runs per cell, a percentile bootstrap from 20 on), t or bootstrap (refused below 20 runs: it undercovers)"},
			&cli.IntFlag{Name: "bootstrap", Value: 10000, Usage: "bootstrap resamples"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "bootstrap seed"},
			&cli.StringFlag{Name: "reference", Usage: "published results: `NAME` of a shipped table (" + strings.Join(reports.PublishedNames(), ", ") + ") or a CSV file"},
			&cli.StringFlag{Name: "reference-dataset", Usage: "published dataset to show under every table (e.g. cub200, cars196, sop)"},
			&cli.StringFlag{Name: "reference-rows", Usage: "';'-separated published approaches to keep (exact name or substring)"},
			&cli.BoolFlag{Name: "standalone", Usage: "latex: emit a complete document (pdflatex-ready)"},
			&cli.StringFlag{Name: "color", Value: "auto", Usage: "terminal: bold best values with ANSI codes: auto | always | never"},
			&cli.BoolFlag{Name: "include-unfinished", Usage: "also use runs whose status is not done"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
		}, reportPaperFlags()...),
		Action: reportAction,
	})
}

func reportAction(c *cli.Context) error {
	paths, err := reportArgs(c)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usagef("report needs at least one run directory or run.json (e.g. dmlbench report runs/)")
	}
	format := strings.ToLower(c.String("format"))
	okFormat := false
	for _, f := range reports.Formats {
		okFormat = okFormat || f == format
	}
	if !okFormat {
		return usagef("--format must be one of %s (got %q)%s", strings.Join(reports.Formats, ", "), format, suggest.Hint(format, reports.Formats))
	}
	color := c.String("color")
	if color != "auto" && color != "always" && color != "never" {
		return usagef("--color must be auto, always or never (got %q)%s", color, suggest.Hint(color, []string{"auto", "always", "never"}))
	}
	if len(paths) == 1 && tune.IsOutDir(paths[0]) {
		return tuneReport(c, paths[0], format, color)
	}
	opt, err := reportOptions(c)
	if err != nil {
		return err
	}
	loaded, err := reports.LoadRuns(paths, reports.LoadOptions{IncludeUnfinished: c.Bool("include-unfinished")})
	if err != nil {
		return err
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	if len(loaded.Runs) == 0 {
		return fmt.Errorf("no finished runs under %s (%d unfinished: %s)", strings.Join(paths, " "), len(loaded.Skipped), strings.Join(loaded.Skipped, ", "))
	}
	if c.IsSet("metrics") {
		if opt.Metrics, err = reports.ResolveMetrics(opt.Metrics, loaded.Runs, opt); err != nil {
			return usagef("--metrics: %v", err)
		}
	}
	fo := reports.FormatOptions{Standalone: c.Bool("standalone")}
	if err := reportPaperOptions(c, &opt, &fo); err != nil {
		return err
	}
	rep, err := reports.Aggregate(loaded.Runs, opt)
	if err != nil {
		return err
	}
	if err := renameReport(c, rep, c.App.ErrWriter); err != nil {
		return err
	}
	if len(loaded.Skipped) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d unfinished run(s) skipped: %s", len(loaded.Skipped), strings.Join(loaded.Skipped, ", ")))
	}
	rep.Notes = append(rep.Notes, suite.MissingNotes(paths)...)
	return reportWrite(c, rep, format, color, fo)
}

// reportWrite writes rep in format with fo to --out or stdout, in colour
// as --color says (auto: on a terminal).
func reportWrite(c *cli.Context, rep *reports.Report, format, color string, fo reports.FormatOptions) error {
	out := c.String("out")
	switch color {
	case "always":
		fo.Color = true
	case "auto":
		fo.Color = out == "" && reportIsTTY(c.App.Writer)
	}
	var buf bytes.Buffer
	if err := reports.Write(&buf, rep, format, fo); err != nil {
		return err
	}
	return reports.WriteOutput(c.App.Writer, out, buf.Bytes())
}

func reportOptions(c *cli.Context) (reports.Options, error) {
	opt := reports.Options{
		GroupBy:          reports.SplitList(c.String("group-by"), ","),
		Metrics:          reports.SplitList(c.String("metrics"), ","),
		Source:           c.String("source"),
		Raw:              c.Bool("raw"),
		Baseline:         c.String("baseline"),
		Alpha:            c.Float64("alpha"),
		CI:               c.Float64("ci"),
		CIMethod:         c.String("ci-method"),
		Bootstrap:        c.Int("bootstrap"),
		Seed:             c.Uint64("seed"),
		ReferenceDataset: c.String("reference-dataset"),
	}
	if err := opt.Check(); err != nil {
		return opt, usageError{Err: err}
	}
	return opt, opt.SetReference(c.String("reference"), c.String("reference-rows"), c.IsSet("reference-dataset") || c.IsSet("reference-rows"))
}

// reportIsTTY reports whether w is a terminal.
func reportIsTTY(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr }) // *os.File, or a procout.Checked around one
	return ok && term.IsTerminal(int(f.Fd()))
}

// oneArg is the single positional argument of command (reportArgs), or a
// usage error naming what it must be.
func oneArg(c *cli.Context, command, what string) (string, error) {
	args, err := reportArgs(c)
	if err != nil {
		return "", err
	}
	if len(args) != 1 {
		return "", usagef("%s needs exactly one %s (got %d arguments)", command, what, len(args))
	}
	return args[0], nil
}

// reportArgs returns the positional arguments of c after applying any flags
// that follow them: urfave/cli v2 stops parsing flags at the first
// positional argument, so `dmlbench report runs/ --format markdown` would
// otherwise take "--format" for a path. "--" ends flag parsing.
func reportArgs(c *cli.Context) ([]string, error) {
	var pos []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, val, hasVal = name[:k], name[k+1:], true
		}
		var f cli.Flag
		for _, cand := range c.Command.Flags {
			for _, n := range cand.Names() {
				if n == name {
					f = cand
				}
			}
		}
		if f == nil {
			return nil, withFlagSuggestion(usagef("flag provided but not defined: -%s", name), c.Command.Flags)
		}
		if !hasVal {
			if _, isBool := f.(*cli.BoolFlag); isBool {
				val = "true"
			} else {
				if i+1 >= len(args) {
					return nil, usagef("flag needs an argument: -%s", name)
				}
				i++
				val = args[i]
			}
		}
		if err := c.Set(f.Names()[0], val); err != nil {
			return nil, usagef("invalid value %q for flag -%s: %v", val, name, err)
		}
	}
	return pos, nil
}
