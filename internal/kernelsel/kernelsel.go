// Package kernelsel chooses the instruction-set level of the hand-written
// kernels (knn's distance kernel, clustering's nearest-centroid kernel) once
// per process, from the CPU's features (golang.org/x/sys/cpu) and the
// DMLBENCH_KERNEL environment variable:
//
//	DMLBENCH_KERNEL=avx512    AVX-512F kernels (error if the CPU lacks them)
//	DMLBENCH_KERNEL=avx2      AVX2+FMA kernels (error if the CPU lacks them)
//	DMLBENCH_KERNEL=portable  pure-Go kernels
//	unset or empty            the best level this CPU supports
//
// The variable exists so that tests and benchmarks can compare the kernels
// on one machine. knn's and clustering's kernels give the same bits at every
// level (one FMA chain per pair, internal/fma32 in Go).
package kernelsel

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/cpu"
)

// Level is an instruction-set level of the kernels.
type Level int

// Levels, lowest first.
const (
	Portable Level = iota
	AVX2
	AVX512
)

// EnvVar is the environment variable that forces a level.
const EnvVar = "DMLBENCH_KERNEL"

func (l Level) String() string {
	switch l {
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "portable"
}

// Supported reports whether this CPU (and this build: the assembly exists
// on amd64 unless built with the purego tag) runs level l.
func Supported(l Level) bool {
	switch l {
	case Portable:
		return true
	case AVX2:
		return asmBuilt && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case AVX512:
		return Supported(AVX2) && cpu.X86.HasAVX512F
	}
	return false
}

// Best is the highest level this CPU supports.
func Best() Level {
	for l := AVX512; l > Portable; l-- {
		if Supported(l) {
			return l
		}
	}
	return Portable
}

var (
	once   sync.Once
	chosen Level
	err    error
)

// Chosen is the level the kernels use in this process: DMLBENCH_KERNEL when
// set and supported, otherwise Best. Err reports a bad DMLBENCH_KERNEL (the
// kernels then use Best).
func Chosen() Level {
	once.Do(func() { chosen, err = parse(os.Getenv(EnvVar)) })
	return chosen
}

// Err is the error of an invalid or unsupported DMLBENCH_KERNEL, or nil.
func Err() error {
	Chosen()
	return err
}

func parse(v string) (Level, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return Best(), nil
	}
	for l := Portable; l <= AVX512; l++ {
		if v == l.String() {
			if !Supported(l) {
				return Best(), fmt.Errorf("%s=%s: this CPU or build does not support it (best here: %s)", EnvVar, v, Best())
			}
			return l, nil
		}
	}
	return Best(), fmt.Errorf("%s=%q: want avx512, avx2 or portable", EnvVar, v)
}

// PortableOnAMD64 reports whether the portable kernels run on an amd64 CPU,
// i.e. several times slower than this machine allows unless forced.
func PortableOnAMD64() bool {
	return runtime.GOARCH == "amd64" && Chosen() == Portable
}
