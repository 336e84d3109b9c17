package gpu

import (
	"fmt"

	"github.com/dmlbench/dmlbench/internal/registry"
	"github.com/dmlbench/dmlbench/knn"
)

// The backend names Register adds to a k-NN backend table (metrics builds
// its table with them). Their k-means assignment runs on the device too:
// Searcher is a clustering.CentroidAssigner (clustering.KMeansOn).
const (
	// Name is the CUDA backend; asking for it without a usable GPU is an
	// error that says why.
	Name = "gpu"
	// AutoName picks Name when Available() and knn.Exact otherwise; the
	// two give identical neighbours, so auto changes only the speed.
	AutoName = "auto"
)

// New is the gpu backend's searcher, or why there is no device.
func New() (knn.Searcher, error) {
	ok, info := Available()
	if !ok {
		return nil, fmt.Errorf("k-NN backend %q: %s", Name, info)
	}
	return Searcher{Device: info}, nil
}

// NewAuto is the device's searcher when there is one, else knn.Exact.
func NewAuto() (knn.Searcher, error) {
	ok, info := Available()
	if !ok {
		return knn.Exact{}, nil
	}
	return Searcher{Device: info}, nil
}

// Register adds gpu and auto to the backend table r.
func Register(r *registry.Registry[knn.Backend]) {
	r.Register(Name, knn.Backend{
		Summary: "exact k-NN on an NVIDIA GPU (CUDA driver loaded at run time), bit-identical to exact; see docs/gpu.md",
		New:     New,
	})
	r.Register(AutoName, knn.Backend{
		Summary: "gpu when a CUDA device is present, else exact (same neighbours either way)",
		New:     NewAuto,
	})
}
