// Package search proposes hyper-parameter configurations: random search and
// the Tree-structured Parzen Estimator (TPE) of Bergstra, Bardenet, Bengio &
// Kégl 2011 ("Algorithms for Hyper-Parameter Optimization", NeurIPS), both
// seeded and deterministic.
//
// A Space is a list of parameters: a float range [low, high], searched
// uniformly or, with log, uniformly in log(x); an integer range (a float
// range rounded); or a list of categorical values. A Point holds one value
// per parameter in Space order (a categorical value as the index of its
// value). Scores are maximised; a NaN score (a failed trial) counts as the
// worst.
//
// Determinism: trial i draws from its own random stream, seeded from
// (seed, i) (PCG, math/rand/v2), and a proposal depends only on the seed,
// the trial index and the observations passed in. A driver that proposes
// the trials in batches of P (trials bP … bP+P−1 from the results of all
// trials before bP) thus gets the same trials on every run, however the
// cells of a batch are scheduled.
//
// TPE (Bergstra et al. 2011 §4): the first Startup trials are random (the
// same points random search draws for those indices). Afterwards the
// finished trials are split at the γ-quantile of their scores into the
// good group (the ⌈γ·n⌉ best) and the bad group (the rest), and each
// parameter is chosen independently: a Parzen estimator l(x) is fitted to
// the good values and g(x) to the bad ones, Candidates values are drawn
// from l, and the one maximising l(x)/g(x) — which maximises expected
// improvement under the estimator (§4.1) — is proposed. For a range, the
// estimator is a mixture of Gaussians truncated to the range, one per
// observation centred on it, with bandwidth the larger distance to its
// neighbours clipped to [range/min(100, n+1), range], plus a prior
// component centred on the range with σ = range (the adaptive Parzen
// estimator of Bergstra et al.'s hyperopt); in log space for log ranges.
// For a categorical parameter it is the smoothed count (count + prior
// weight) / (n + K·prior weight). Within a batch, the points already
// proposed are added to the bad group ("constant liar" with the worst
// score, Ginsbourger et al. 2010), which keeps the batch's points apart.
package search
