//go:build !(linux && (amd64 || arm64)) || nogpu

package gpu

import (
	"fmt"
	"runtime"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Available reports whether a usable CUDA device is present; in this build
// the driver is never loaded.
func Available() (ok bool, info string) {
	if noGPUTag {
		return false, fmt.Sprintf("%v: built with -tags nogpu", errNoDevice)
	}
	return false, fmt.Sprintf("%v: the GPU backend supports linux/amd64 and linux/arm64, not %s/%s", errNoDevice, runtime.GOOS, runtime.GOARCH)
}

func newDevice() (engine, error) {
	_, why := Available()
	return nil, fmt.Errorf("gpu: %s", why)
}

func deviceArgmin(x, c mat32.Matrix, cn []float32) ([]float32, []int32, error) {
	_, why := Available()
	return nil, nil, fmt.Errorf("gpu: %s", why)
}
