package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/knn/gpu"
)

var wireOnce sync.Once

// wireBackends gives the GPU backends ("gpu", "auto"; knn/gpu registers
// them in knn.Backends) their k-means in clustering: the assignment step on
// the device, or the CPU kernel for auto without one. run calls it once.
func wireBackends() {
	wireOnce.Do(func() {
		for _, name := range []string{gpu.Name, gpu.AutoName} {
			clustering.Engines.Register(name, func(opt clustering.KMeansOptions) (*clustering.KMeansEngine, error) {
				a, err := gpu.OpenAssigner(name)
				if err != nil || a == nil {
					return nil, err
				}
				return clustering.AssignerEngine(*a, opt), nil
			})
		}
	})
}

// This file links knn/gpu and reports the device.
func init() {
	gpu.OnAuto = func(device string) {
		fmt.Fprintf(os.Stderr, "dmlbench: --backend auto: k-NN and k-means on the GPU, %s\n", device)
	}
	versionLines = append(versionLines, func() string {
		ok, info := gpu.Available()
		if !ok {
			return "GPU: none (" + info + ")"
		}
		return "GPU: " + info
	})
}
