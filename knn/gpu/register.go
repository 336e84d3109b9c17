package gpu

import (
	"fmt"

	"github.com/dmlbench/dmlbench/knn"
)

// Backend names this package registers in knn.Backends (a binary gets them
// by importing the package). Their k-means assignment runs on the device
// too: Searcher is a clustering.CentroidAssigner (clustering.KMeansOn).
const (
	// Name is the CUDA backend; asking for it without a usable GPU is an
	// error that says why.
	Name = "gpu"
	// AutoName picks Name when Available() and knn.Exact otherwise; the
	// two give identical neighbours, so auto changes only the speed.
	AutoName = "auto"
)

func init() {
	knn.Backends.Register(Name, knn.Backend{
		Summary: "exact k-NN on an NVIDIA GPU (CUDA driver loaded at run time), bit-identical to exact; see docs/gpu.md",
		New: func() (knn.Searcher, error) {
			ok, info := Available()
			if !ok {
				return nil, fmt.Errorf("k-NN backend %q: %s", Name, info)
			}
			return Searcher{Device: info}, nil
		},
	})
	knn.Backends.Register(AutoName, knn.Backend{
		Summary: "gpu when a CUDA device is present, else exact (same neighbours either way)",
		New: func() (knn.Searcher, error) {
			ok, info := Available()
			if !ok {
				return knn.Exact{}, nil
			}
			return Searcher{Device: info}, nil
		},
	})
}
