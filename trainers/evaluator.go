package trainers

import "github.com/dmlbench/dmlbench/knn"

// NewEvaluator is the evaluation of `dmlbench run` for cfg (metrics.Evaluate
// under its metrics, convention, distance and k-NN backend), for callers
// that train on splits of their own (the folds of `dmlbench tune`).
func NewEvaluator(cfg Config) (EvalFunc, error) {
	searcher, err := knn.New(cfg.Backend)
	if err != nil {
		return nil, &ConfigError{err}
	}
	return newEvaluator(cfg, searcher), nil
}
