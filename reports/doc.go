// Package reports turns run.json files (package record) into the tables of
// DML papers: one row per method with mean ± sample standard deviation over
// seeds, best values in bold, optional Δ to a baseline with Welch's t-test
// and confidence intervals — Student's t-interval of the mean (Welch's of
// Δ) below BootstrapMinN runs per cell, the percentile bootstrap from there
// on (in the spirit of benchstat) — and published reference rows (Roth et al. 2020,
// supplementary Tab. 4–6).
//
// Tables read only run.json; the schema is documented in docs/run-json.md.
// Formats: Markdown (GitHub), LaTeX (booktabs), terminal (tablewriter v1)
// and CSV. The figures of the same runs are package reports/plots; package
// suite runs the grids of experiments that produce the run.json
// files.
package reports
