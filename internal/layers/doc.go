// Package layers declares the import layering of the module and tests it
// (layers_test.go runs `go list` over every package under several build
// tag sets). A package may import packages of its own layer or below,
// never above:
//
//	0  mat32, trainers/param, internal/…, knn/faissc, tune/search: leaf packages
//	1  knn (and knn/gpu), spectra, projection, record, fixtures (and fixtures/arrays)
//	2  clustering
//	3  metrics
//	4  trainers and its sub-packages (model, losses, miners, samplers, …)
//	5  suite, tune, external, reports (and reports/plots), paired, showpage,
//	   audit: orchestration, statistics and output
//	6  cmd/…: the command line
//
// Within a layer, Go's ban on import cycles keeps the order.
package layers

// Layers maps a package path relative to the module (or a path prefix
// ending in "/") to its layer; the longest match wins.
var Layers = map[string]int{
	"mat32": 0, "trainers/param": 0, "internal/": 0, "knn/faissc": 0, "tune/search": 0,
	"knn": 1, "knn/": 1, "spectra": 1, "projection": 1, "record": 1, "fixtures": 1, "fixtures/": 1,
	"clustering": 2,
	"metrics":    3,
	"trainers":   4, "trainers/": 4,
	"suite": 5, "tune": 5, "external": 5, "reports": 5, "reports/": 5, "paired": 5, "showpage": 5, "audit": 5,
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
