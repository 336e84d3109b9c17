//go:build !amd64 || purego

package kernelsel

const asmBuilt = false
