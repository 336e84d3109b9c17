package trainers

import "github.com/dmlbench/dmlbench/metrics"

// NewEvaluator is the evaluation of `dmlbench run` for cfg (metrics.Evaluate
// under its metrics, convention, distance and k-NN backend), for callers
// that train on splits of their own (the folds of `dmlbench tune`).
func NewEvaluator(cfg Config) (EvalFunc, error) {
	b, err := openBackend(cfg)
	if err != nil {
		return nil, err
	}
	return newEvaluator(cfg, b), nil
}

// openBackend resolves cfg.Backend for cfg's convention
// (metrics.OpenBackend); a backend that cannot start is a *ConfigError.
func openBackend(cfg Config) (metrics.Backend, error) {
	b, err := metrics.OpenBackend(cfg.Backend, metrics.Convention(cfg.Convention), 0)
	if err != nil {
		return b, &ConfigError{err}
	}
	return b, nil
}
