//go:build !nogpu

package gpu

const noGPUTag = false
