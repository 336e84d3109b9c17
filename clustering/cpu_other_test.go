//go:build !linux

package clustering

// cpuSeconds is not measured off Linux (the cpu-s/op metric reads 0).
func cpuSeconds() float64 { return 0 }
