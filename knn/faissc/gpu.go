//go:build faiss && cuda

package faissc

/*
#cgo CFLAGS: -O2 -I/usr/local/cuda/include
#cgo LDFLAGS: -lfaiss_c
#include <stdlib.h>
#include <string.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/gpu/GpuAutoTune_c.h>
#include <faiss/c_api/gpu/StandardGpuResources_c.h>

// Same rule as faissc.go: copy the thread-local error in the failing call.
static int dml_gpu_fail(int rc, char **err) {
	const char *m = faiss_get_last_error();
	*err = strdup(m != NULL && m[0] != 0 ? m : "unknown faiss error");
	return rc;
}

static int dml_gpu_res_new(FaissStandardGpuResources **out, long long temp, char **err) {
	int rc = faiss_StandardGpuResources_new(out);
	if (rc) return dml_gpu_fail(rc, err);
	if (temp >= 0) {
		rc = faiss_StandardGpuResources_setTempMemory(*out, (size_t)temp);
		if (rc) {
			dml_gpu_fail(rc, err);
			faiss_StandardGpuResources_free(*out);
			*out = NULL;
			return rc;
		}
	}
	return 0;
}

static int dml_gpu_clone(FaissStandardGpuResources *res, int device, const FaissIndex *cpu,
		FaissIndex **out, char **err) {
	FaissGpuIndex *g = NULL;
	int rc = faiss_index_cpu_to_gpu((FaissGpuResourcesProvider *)res, device, cpu, &g);
	if (rc) return dml_gpu_fail(rc, err);
	*out = (FaissIndex *)g;
	return 0;
}
*/
import "C"

import "fmt"

// GPUMaxK is the largest k faiss's GPU k-selection supports (faiss 1.7:
// GPU_MAX_SELECTION_K = 2048); deeper searches must run on the CPU.
const GPUMaxK = 2048

// GPUResources is a faiss StandardGpuResources (cuBLAS handle, streams,
// temporary-memory pool) for one process. Free it when done.
type GPUResources struct{ ptr *C.FaissStandardGpuResources }

// NewGPUResources creates the resources; tempBytes >= 0 sets the size of
// faiss's temporary-memory pool (faiss's default, < 0, reserves ~18% of the
// device's memory up to 1.5 GiB).
func NewGPUResources(tempBytes int64) (*GPUResources, error) {
	var p *C.FaissStandardGpuResources
	var msg *C.char
	if err := faissErr("StandardGpuResources_new", C.dml_gpu_res_new(&p, C.longlong(tempBytes), &msg), msg); err != nil {
		return nil, err
	}
	return &GPUResources{ptr: p}, nil
}

// Free releases the resources (after every GPU index made from them).
func (r *GPUResources) Free() {
	if r != nil && r.ptr != nil {
		C.faiss_StandardGpuResources_free(r.ptr)
		r.ptr = nil
	}
}

// ToGPU copies a CPU flat index to GPU device (faiss_index_cpu_to_gpu). The
// result is an Index like any other (Search, SearchInto, Free) whose k is
// limited to GPUMaxK; free it before the resources.
func (r *GPUResources) ToGPU(cpu *Index, device int) (*Index, error) {
	if r.ptr == nil || cpu.ptr == nil {
		return nil, fmt.Errorf("%w: GPU resources or CPU index already freed", ErrInvalid)
	}
	var g *C.FaissIndex
	var msg *C.char
	if err := faissErr("index_cpu_to_gpu", C.dml_gpu_clone(r.ptr, C.int(device), cpu.ptr, &g, &msg), msg); err != nil {
		return nil, err
	}
	return &Index{ptr: g, d: cpu.d, metric: cpu.metric, threads: cpu.threads}, nil
}
