package main

import (
	"fmt"
	"os"

	"github.com/dmlbench/dmlbench/knn/gpu"
)

// The GPU backends ("gpu", "auto") register themselves in knn.Backends, and
// their k-means assignment in clustering, when knn/gpu is linked in; this
// file links it and reports the device.
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
