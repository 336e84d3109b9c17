// Package spectra computes the singular-value spectrum of an embedding
// matrix and the ρ spectral-decay metric of Roth et al. 2020 (main
// text §5; per-class spectra supp. §E / Fig. 11).
//
//   - SingularValues: σ of the uncentred N×D matrix, descending, from the
//     eigenvalues of the float64 Gram matrix XᵀX (N ≥ D; SVD fallback for
//     near rank-deficient spectra) or gonum's SVD (N < D).
//   - Rho(s, m) = KL(U ‖ ŝ) after dropping the m−1 largest values (natural
//     log; +Inf when a kept value is 0, the caller warns).
//   - PerClass: averaged normalised class-conditioned spectra.
package spectra
