// Package reports turns run.json files (package record) into the tables and
// figures of DML papers: one row per method with mean ± sample standard
// deviation over seeds, best values in bold, optional Δ to a baseline with
// Welch's t-test and percentile-bootstrap confidence intervals (in the
// spirit of benchstat), published reference rows (Roth et al. 2020,
// supplementary Tab. 4–6), and gonum/plot figures: singular-value
// spectra (Roth et al. 2020 Fig. 11), ρ versus R@1 (Fig. 10), R@k curves, training
// curves and embedding-dimension / batch-size sweeps (Fehérvári et al. 2019 Fig. 1–2).
//
// Tables and run figures read only run.json; the schema is documented in
// docs/run-json.md. Figures of an embedding file (its singular-value
// spectrum, EmbeddingSpectrum; a t-SNE map coloured by class, TSNEMap) read
// the .npy/.npz embeddings and labels (package fixtures).
// Formats: Markdown (GitHub), LaTeX (booktabs), terminal (tablewriter v1)
// and CSV. Package trainers/suite runs the grids of experiments that
// produce the run.json files.
package reports
