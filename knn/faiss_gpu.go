//go:build faiss && cuda

package knn

import (
	"context"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn/faissc"
)

// FaissGPUCompiled reports whether the "faiss-gpu" backend is compiled in.
const FaissGPUCompiled = true

func init() {
	Backends.Register(FaissGPUName, Backend{
		Summary: "faiss on CUDA (IndexFlat copied to the GPU)",
		New:     func() (Searcher, error) { return FaissGPU{}, nil },
	})
}

// FaissGPU is the exact k-NN Searcher on an NVIDIA GPU: the database goes
// into a CPU IndexFlatL2/IP that faiss_index_cpu_to_gpu copies to the
// device (faiss_StandardGpuResources_new per search). It shares Faiss's
// batching, self-exclusion and tie handling (see Faiss), so results follow
// the same contract. Queries are searched in batches whose result buffers
// stay under BatchBytes, which also bounds the device memory one call takes
// (all queries at once is what runs out of GPU memory in
// pytorch-metric-learning issue #353). Depths above faiss's GPU limit
// (k > 2048, faissc.GPUMaxK) run on the CPU index in the same batches.
// Build: see docs/faiss-gpu.md.
type FaissGPU struct {
	Device     int   // CUDA device number
	BatchBytes int   // per-batch result buffers; 0 means 64 MiB
	TempMemory int64 // faiss temporary-memory pool in bytes; 0 means faiss's default
}

// Name implements Searcher.
func (FaissGPU) Name() string { return FaissGPUName }

// Search implements Searcher.
func (g FaissGPU) Search(ctx context.Context, q, db mat32.Matrix, k int, opt Options) (*Neighbors, error) {
	cpu, err := faissIndexFor(ctx, q, db, k, opt)
	if err != nil {
		return nil, err
	}
	defer cpu.Free()
	temp := g.TempMemory
	if temp == 0 {
		temp = -1
	}
	res, err := faissc.NewGPUResources(temp)
	if err != nil {
		return nil, err
	}
	defer res.Free()
	gpu, err := res.ToGPU(cpu, g.Device)
	if err != nil {
		return nil, err
	}
	defer gpu.Free() // runs before res.Free
	return Faiss{BatchBytes: g.BatchBytes}.searchIndex(ctx, gpuOrCPU{gpu: gpu, cpu: cpu}, q, db.Rows, k, opt)
}

// gpuOrCPU searches on the GPU up to faiss's GPU k limit, on the CPU beyond.
type gpuOrCPU struct{ gpu, cpu *faissc.Index }

func (s gpuOrCPU) SearchInto(v []float32, k int64, dist []float32, labels []int64) error {
	if k > faissc.GPUMaxK {
		return s.cpu.SearchInto(v, k, dist, labels)
	}
	return s.gpu.SearchInto(v, k, dist, labels)
}
