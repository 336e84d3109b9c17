package gpu

import (
	"fmt"
	"sync"

	"github.com/dmlbench/dmlbench/knn"
)

// Backend names this package registers in knn.Backends (a binary gets them
// by importing the package). Their k-means assignment (Assigner, OpenAssigner)
// is wired into clustering by the command layer.
const (
	// Name is the CUDA backend; asking for it without a usable GPU is an
	// error that says why.
	Name = "gpu"
	// AutoName picks Name when Available() and knn.Exact otherwise; the
	// two give identical neighbours, so auto changes only the speed.
	AutoName = "auto"
)

// OnAuto, if set, is called once, the first time the auto backend picks the
// GPU, with the device description (the command line prints it on stderr).
var OnAuto func(device string)

var autoOnce sync.Once

func init() {
	knn.Backends.Register(Name, knn.Backend{
		Summary: "exact k-NN on an NVIDIA GPU (CUDA driver loaded at run time), bit-identical to exact; see docs/gpu.md",
		New: func() (knn.Searcher, error) {
			if ok, why := Available(); !ok {
				return nil, fmt.Errorf("k-NN backend %q: %s", Name, why)
			}
			return Searcher{}, nil
		},
	})
	knn.Backends.Register(AutoName, knn.Backend{
		Summary: "gpu when a CUDA device is present, else exact (same neighbours either way)",
		New: func() (knn.Searcher, error) {
			ok, info := Available()
			if !ok {
				return knn.Exact{}, nil
			}
			autoOnce.Do(func() {
				if OnAuto != nil {
					OnAuto(info)
				}
			})
			return Searcher{}, nil
		},
	})
}

// OpenAssigner returns the k-means assignment step of the backend named
// name: Assigner for Name (an error that says why when no GPU is usable),
// Assigner or nil (the CPU kernel) for AutoName, nil for any other name.
func OpenAssigner(name string) (*Assigner, error) {
	switch name {
	case Name:
		if ok, why := Available(); !ok {
			return nil, fmt.Errorf("k-means backend %q: %s", Name, why)
		}
		return &Assigner{}, nil
	case AutoName:
		if ok, _ := Available(); ok {
			return &Assigner{}, nil
		}
	}
	return nil, nil
}
