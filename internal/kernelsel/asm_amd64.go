//go:build !purego

package kernelsel

const asmBuilt = true
