package main

import "github.com/dmlbench/dmlbench/knn/gpu"

// gpuLine is version's line about the CUDA device.
func gpuLine() string {
	ok, info := gpu.Available()
	if !ok {
		return "GPU: none (" + info + ")"
	}
	return "GPU: " + info
}
