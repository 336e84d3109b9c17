//go:build nogpu

package gpu

// noGPUTag: built with -tags nogpu (no driver loading; a CGO_ENABLED=0
// binary is then fully static again).
const noGPUTag = true
