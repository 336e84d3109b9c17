// Package layers declares the import layering of the module and tests it
// (layers_test.go runs `go list` over every package under several build
// tag sets). A package may import packages of its own layer or below,
// never above:
//
//	0  internal/… (mat32, record, atomicfile, …), trainers/param, knn/faissc,
//	   experiments/tune/search: leaf packages
//	1  fixtures/ (data sets, array readers, audit), knn/ (exact, faiss, gpu), spectra
//	2  clustering
//	3  metrics, metrics/partial
//	4  trainers/ (model, losses, miners, samplers, …)
//	5  experiments/ (cell, suite, tune, shards) and reports/ (tables, plots, compare,
//	   show, projection, distractors): orchestration, statistics and output
//	6  cmd/…: the command line
//
// Within a layer, Go's ban on import cycles keeps the order.
package layers

// Layers maps a package path relative to the module (or a path prefix
// ending in "/") to its layer; the longest match wins.
var Layers = map[string]int{
	"internal/": 0, "trainers/param": 0, "knn/faissc": 0, "experiments/tune/search": 0,
	"fixtures": 1, "fixtures/": 1, "knn": 1, "knn/": 1, "spectra": 1,
	"clustering": 2,
	"metrics":    3, "metrics/": 3,
	"trainers": 4, "trainers/": 4,
	"experiments/": 5, "reports": 5, "reports/": 5,
	"cmd/": 6,
}

// Of returns the layer of the module-relative package path pkg, and false
// when no entry matches it.
func Of(pkg string) (int, bool) {
	best, layer := -1, 0
	for p, l := range Layers {
		match := p == pkg || (p[len(p)-1] == '/' && len(pkg) > len(p) && pkg[:len(p)] == p)
		if match && len(p) > best {
			best, layer = len(p), l
		}
	}
	return layer, best >= 0
}
