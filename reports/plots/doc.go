// Package plots draws the figures of DML papers with gonum/plot from
// run.json files (package reports loads and groups them) and from
// embedding files: singular-value spectra (Roth et al. 2020 Fig. 11), ρ
// versus R@1 (Fig. 10), R@k curves, training curves, embedding-dimension /
// batch-size sweeps (Fehérvári et al. 2019 Fig. 1–2) and 2-D t-SNE maps
// coloured by class (the projection itself is package projection).
//
// Metrics in [0, 1] are drawn in percent (reports.IsPercentMetric), the
// unit of the papers' figures; the axis label says so.
package plots
