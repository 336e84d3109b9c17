package main

import "github.com/dmlbench/dmlbench/metrics"

// kmeansHooks lets build-tagged files (faiss) supply k-means per backend.
var kmeansHooks = map[string]func(compat string, threads int) metrics.KMeansFunc{}

func kmeansForBackend(backend, compat string, threads int) metrics.KMeansFunc {
	if h, ok := kmeansHooks[backend]; ok {
		return h(compat, threads)
	}
	return nil
}
