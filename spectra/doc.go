// Package spectra computes the singular-value spectrum of an embedding
// matrix and the ρ spectral-decay metric of Roth et al. 2020 (seed 000, §5
// and supplementary §E).
package spectra
