//go:build linux && (amd64 || arm64) && !nogpu

package gpu

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/ebitengine/purego"
)

// The NVIDIA driver API, loaded at run time from libcuda.so.1 (no cgo, no
// CUDA toolkit at build time). Only the entry points below are used; the
// "_v2" names are the 64-bit ABI every driver since CUDA 4 exports.
var (
	cuInit                   func(flags uint32) int32
	cuDeviceGetCount         func(n *int32) int32
	cuDeviceGet              func(dev *int32, ordinal int32) int32
	cuDeviceGetName          func(name *byte, n int32, dev int32) int32
	cuDeviceTotalMem         func(bytes *uint64, dev int32) int32
	cuDeviceGetAttribute     func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain func(ctx *uintptr, dev int32) int32
	cuCtxSetCurrent          func(ctx uintptr) int32
	cuCtxSynchronize         func() int32
	cuMemAlloc               func(p *uint64, bytes uintptr) int32
	cuMemFree                func(p uint64) int32
	cuMemcpyHtoD             func(dst uint64, src unsafe.Pointer, bytes uintptr) int32
	cuMemcpyDtoH             func(dst unsafe.Pointer, src uint64, bytes uintptr) int32
	cuMemsetD32              func(dst uint64, v uint32, n uintptr) int32
	cuModuleLoadData         func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleGetFunction      func(fn *uintptr, mod uintptr, name string) int32
	cuLaunchKernel           func(fn uintptr, gx, gy, gz, bx, by, bz, shmem uint32, stream uintptr, params, extra unsafe.Pointer) int32
	cuGetErrorString         func(r int32, s **byte) int32
)

// CUDA_ERROR_NO_DEVICE (CUresult).
const cudaErrorNoDevice = 100

// Device attributes (CUdevice_attribute).
const (
	attrCCMajor = 75
	attrCCMinor = 76
)

// cudaState is the process-wide driver state, set up once.
var cudaState struct {
	once    sync.Once
	err     error  // why no device is usable
	info    string // "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)"
	ctx     uintptr
	mod     uintptr
	kernels map[string]uintptr
}

func cudaInit() {
	st := &cudaState
	lib, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		st.err = fmt.Errorf("%w: no NVIDIA driver: libcuda.so.1 not found", errNoDevice)
		return
	}
	syms := []struct {
		fn   any
		name string
	}{
		{&cuInit, "cuInit"}, {&cuDeviceGetCount, "cuDeviceGetCount"}, {&cuDeviceGet, "cuDeviceGet"},
		{&cuDeviceGetName, "cuDeviceGetName"}, {&cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
		{&cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"}, {&cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&cuCtxSynchronize, "cuCtxSynchronize"}, {&cuMemAlloc, "cuMemAlloc_v2"}, {&cuMemFree, "cuMemFree_v2"},
		{&cuMemcpyHtoD, "cuMemcpyHtoD_v2"}, {&cuMemcpyDtoH, "cuMemcpyDtoH_v2"}, {&cuMemsetD32, "cuMemsetD32_v2"},
		{&cuModuleLoadData, "cuModuleLoadData"}, {&cuModuleGetFunction, "cuModuleGetFunction"},
		{&cuLaunchKernel, "cuLaunchKernel"}, {&cuGetErrorString, "cuGetErrorString"},
	}
	for _, s := range syms {
		if _, err := purego.Dlsym(lib, s.name); err != nil {
			st.err = fmt.Errorf("%w: libcuda.so.1 lacks %s (driver too old?)", errNoDevice, s.name)
			return
		}
		purego.RegisterLibFunc(s.fn, lib, s.name)
	}
	if r := cuInit(0); r == cudaErrorNoDevice {
		st.err = fmt.Errorf("%w: CUDA driver found but no device", errNoDevice)
		return
	} else if r != 0 {
		st.err = fmt.Errorf("%w: CUDA driver found but cuInit failed: %s", errNoDevice, cuErr(r))
		return
	}
	var n int32
	if r := cuDeviceGetCount(&n); r != 0 || n == 0 {
		st.err = fmt.Errorf("%w: CUDA driver found but no device", errNoDevice)
		return
	}
	var dev int32
	if r := cuDeviceGet(&dev, 0); r != 0 {
		st.err = fmt.Errorf("%w: cuDeviceGet: %s", errNoDevice, cuErr(r))
		return
	}
	name := make([]byte, 256)
	cuDeviceGetName(&name[0], int32(len(name)), dev)
	var mem uint64
	cuDeviceTotalMem(&mem, dev)
	var ma, mi int32
	cuDeviceGetAttribute(&ma, attrCCMajor, dev)
	cuDeviceGetAttribute(&mi, attrCCMinor, dev)
	st.info = fmt.Sprintf("%s (sm_%d%d, %.1f GiB)", cString(name), ma, mi, float64(mem)/(1<<30))
	if ma < 8 {
		st.err = fmt.Errorf("%w: %s is older than sm_80, which the embedded PTX needs", errNoDevice, st.info)
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := cuDevicePrimaryCtxRetain(&st.ctx, dev); r != 0 {
		st.err = fmt.Errorf("%w: cuDevicePrimaryCtxRetain: %s", errNoDevice, cuErr(r))
		return
	}
	if r := cuCtxSetCurrent(st.ctx); r != 0 {
		st.err = fmt.Errorf("%w: cuCtxSetCurrent: %s", errNoDevice, cuErr(r))
		return
	}
	ptx := append(append([]byte{}, kernelsPTX...), 0)
	if r := cuModuleLoadData(&st.mod, unsafe.Pointer(&ptx[0])); r != 0 {
		st.err = fmt.Errorf("%w: the driver could not load the embedded PTX: %s", errNoDevice, cuErr(r))
		return
	}
	st.kernels = map[string]uintptr{}
	for _, k := range []string{"dist_filter", "merge_topk", "watch_keys", "watch_sort", "watch_shrink", "assign_argmin"} {
		var f uintptr
		if r := cuModuleGetFunction(&f, st.mod, k); r != 0 {
			st.err = fmt.Errorf("%w: kernel %s missing from the PTX: %s", errNoDevice, k, cuErr(r))
			return
		}
		st.kernels[k] = f
	}
}

// Available reports whether a usable CUDA device is present. With ok it
// returns the device ("NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)"), without
// it the reason ("no CUDA device: no NVIDIA driver: libcuda.so.1 not
// found", "no CUDA device: CUDA driver found but no device", ...).
func Available() (ok bool, info string) {
	cudaState.once.Do(cudaInit)
	if cudaState.err != nil {
		return false, cudaState.err.Error()
	}
	return true, cudaState.info
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// cuErr names a CUresult.
func cuErr(r int32) string {
	var p *byte
	if cuGetErrorString != nil && cuGetErrorString(r, &p) == 0 && p != nil {
		var b []byte
		for i := 0; i < 512; i++ {
			c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i)) // a C string owned by the driver
			if c == 0 {
				break
			}
			b = append(b, c)
		}
		return fmt.Sprintf("%s (CUresult %d)", b, r)
	}
	return fmt.Sprintf("CUresult %d", r)
}

// device is the CUDA engine: device buffers for one search and the kernel
// launches of kernels.cu. All calls happen on the goroutine that created
// it, locked to its OS thread (the driver's current context is per thread).
type device struct {
	p                     params
	bufs                  []uint64
	q, x, nq, nx          uint64
	top, thr, cand, cnt   uint64
	ovf, novf, scratch    uint64
	alive, wbound         uint64
	woff, wq, wids, wkeys uint64
	wcnt                  uint64
	q0, qb, nw            int
	watch                 bool
}

func newDevice() (engine, error) {
	if ok, why := Available(); !ok {
		return nil, fmt.Errorf("gpu: %s", why)
	}
	runtime.LockOSThread()
	if r := cuCtxSetCurrent(cudaState.ctx); r != 0 {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("gpu: cuCtxSetCurrent: %s", cuErr(r))
	}
	return &device{}, nil
}

func (dv *device) alloc(bytes int, what string) (uint64, error) {
	var p uint64
	if r := cuMemAlloc(&p, uintptr(max(bytes, 8))); r != 0 {
		return 0, fmt.Errorf("gpu: cannot allocate %.1f MiB of device memory for %s: %s", float64(bytes)/(1<<20), what, cuErr(r))
	}
	dv.bufs = append(dv.bufs, p)
	return p, nil
}

func htod[T any](dst uint64, src []T) error {
	if len(src) == 0 {
		return nil
	}
	if r := cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), uintptr(len(src))*unsafe.Sizeof(src[0])); r != 0 {
		return fmt.Errorf("gpu: copy to device: %s", cuErr(r))
	}
	return nil
}

func dtoh[T any](dst []T, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	if r := cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, uintptr(len(dst))*unsafe.Sizeof(dst[0])); r != 0 {
		return fmt.Errorf("gpu: copy from device (a kernel may have failed): %s", cuErr(r))
	}
	return nil
}

func memset32(dst uint64, v uint32, n int) error {
	if n == 0 {
		return nil
	}
	if r := cuMemsetD32(dst, v, uintptr(n)); r != 0 {
		return fmt.Errorf("gpu: memset: %s", cuErr(r))
	}
	return nil
}

// launch runs kernel name on a gx×gy grid of bx×by blocks. Arguments are
// int (passed as a 32-bit int), float32 or a device pointer (uint64); each
// sits in its own 8-byte slot, from which the driver copies the
// parameter's size.
func launch(name string, gx, gy, bx, by, shmem int, args ...any) error {
	slots := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&slots[0])
	for i, a := range args {
		switch v := a.(type) {
		case int:
			slots[i] = uint64(uint32(int32(v)))
		case bool:
			if v {
				slots[i] = 1
			}
		case float32:
			slots[i] = uint64(math.Float32bits(v))
		case uint64:
			slots[i] = v
		default:
			panic(fmt.Sprintf("gpu: launch argument of type %T", a))
		}
		ptrs[i] = unsafe.Pointer(&slots[i])
	}
	pin.Pin(&ptrs[0])
	r := cuLaunchKernel(cudaState.kernels[name], uint32(gx), uint32(gy), 1, uint32(bx), uint32(by), 1,
		uint32(shmem), 0, unsafe.Pointer(&ptrs[0]), nil)
	if r != 0 {
		return fmt.Errorf("gpu: launching %s: %s", name, cuErr(r))
	}
	return nil
}

func (dv *device) load(p params, q []float32, m int, x []float32, n int, nq, nx []float32) (err error) {
	dv.p = p
	type buf struct {
		dst   *uint64
		bytes int
		what  string
	}
	same := len(q) > 0 && len(x) > 0 && &q[0] == &x[0] && m == n
	bs := []buf{
		{&dv.x, 4 * len(x), "the database"}, {&dv.nx, 4 * n, "norms"},
		{&dv.top, 8 * p.qbMax * p.k, "top-k lists"}, {&dv.thr, 8 * p.qbMax, "bounds"},
		{&dv.cand, 8 * p.qbMax * p.capacity, "candidate buffers"}, {&dv.cnt, 4 * p.qbMax, "counters"},
		{&dv.ovf, 4 * p.qbMax, "flags"}, {&dv.novf, 4, "flags"},
		{&dv.alive, 4 * p.qbMax, "watch state"}, {&dv.wbound, 8 * p.qbMax, "watch state"},
	}
	if !same {
		bs = append(bs, buf{&dv.q, 4 * len(q), "the queries"}, buf{&dv.nq, 4 * m, "norms"})
	}
	if p.scratch {
		bs = append(bs, buf{&dv.scratch, 8 * p.qbMax * p.sortLen, "merge scratch"})
	}
	for _, b := range bs {
		if *b.dst, err = dv.alloc(b.bytes, b.what); err != nil {
			return err
		}
	}
	if same {
		dv.q, dv.nq = dv.x, dv.nx
	}
	if err := htod(dv.x, x); err != nil {
		return err
	}
	if err := htod(dv.nx, nx); err != nil {
		return err
	}
	if !same {
		if err := htod(dv.q, q); err != nil {
			return err
		}
		if err := htod(dv.nq, nq); err != nil {
			return err
		}
	}
	return nil
}

func (dv *device) begin(q0, qb int, woff, wids []int32) error {
	dv.q0, dv.qb = q0, qb
	k := dv.p.k
	if err := memset32(dv.top, 0xFFFFFFFF, 2*qb*k); err != nil {
		return err
	}
	if err := memset32(dv.thr, 0xFFFFFFFF, 2*qb); err != nil {
		return err
	}
	for _, b := range []uint64{dv.cnt, dv.ovf, dv.alive} {
		if err := memset32(b, 0, qb); err != nil {
			return err
		}
	}
	if err := memset32(dv.wbound, 0, 2*qb); err != nil {
		return err
	}
	dv.watch = woff != nil
	if !dv.watch {
		return nil
	}
	for _, b := range []uint64{dv.woff, dv.wq, dv.wids, dv.wkeys, dv.wcnt} { // previous block's lists
		dv.freeBuf(b)
	}
	dv.nw = len(wids)
	wq := make([]int32, len(wids))
	for i := 0; i < qb; i++ {
		for t := woff[i]; t < woff[i+1]; t++ {
			wq[t] = int32(i)
		}
	}
	var err error
	if dv.woff, err = dv.alloc(4*len(woff), "watch lists"); err != nil {
		return err
	}
	if dv.wq, err = dv.alloc(4*len(wq), "watch lists"); err != nil {
		return err
	}
	if dv.wids, err = dv.alloc(4*len(wids), "watch lists"); err != nil {
		return err
	}
	if dv.wkeys, err = dv.alloc(8*len(wids), "watch lists"); err != nil {
		return err
	}
	if dv.wcnt, err = dv.alloc(4*len(wids), "watch lists"); err != nil {
		return err
	}
	for _, c := range []struct {
		d uint64
		s []int32
	}{{dv.woff, woff}, {dv.wq, wq}, {dv.wids, wids}} {
		if err := htod(c.d, c.s); err != nil {
			return err
		}
	}
	if err := memset32(dv.wcnt, 0, len(wids)); err != nil {
		return err
	}
	if len(wids) > 0 {
		if err := launch("watch_keys", (len(wids)+255)/256, 1, 256, 1, 0,
			dv.q, dv.x, dv.nq, dv.nx, dv.p.d, q0, dv.wq, dv.wids, len(wids), dv.p.scale, dv.p.lo, dv.wkeys); err != nil {
			return err
		}
	}
	return launch("watch_sort", (qb+255)/256, 1, 256, 1, 0, dv.woff, dv.wkeys, dv.alive, dv.wbound, qb, dv.p.maxRank)
}

func (dv *device) freeBuf(b uint64) {
	if b == 0 {
		return
	}
	for i, x := range dv.bufs {
		if x == b {
			cuMemFree(b)
			dv.bufs = append(dv.bufs[:i], dv.bufs[i+1:]...)
			return
		}
	}
}

func (dv *device) dist(x0, xn int, rerun bool) error {
	p := dv.p
	return launch("dist_filter", (xn+63)/64, (dv.qb+63)/64, 16, 16, 0,
		dv.q, dv.x, dv.nq, dv.nx, p.d, dv.q0, dv.qb, x0, xn, p.excl, p.scale, p.lo,
		dv.thr, dv.cand, dv.cnt, p.capacity, dv.ovf, rerun,
		dv.woff, dv.wkeys, dv.wcnt, dv.alive, dv.wbound, dv.watch)
}

func (dv *device) merge(rerun bool) (int, error) {
	p := dv.p
	if err := memset32(dv.novf, 0, 1); err != nil {
		return 0, err
	}
	shmem := 0
	if !p.scratch {
		shmem = 8 * p.sortLen
	}
	if err := launch("merge_topk", dv.qb, 1, min(512, max(32, p.sortLen/2)), 1, shmem,
		dv.top, dv.thr, dv.cand, dv.cnt, dv.ovf, dv.novf, p.k, p.capacity, p.sortLen, rerun,
		dv.scratch, !p.scratch); err != nil {
		return 0, err
	}
	var n [1]int32
	if err := dtoh(n[:], dv.novf); err != nil { // synchronises
		return 0, err
	}
	return int(n[0]), nil
}

func (dv *device) shrink() error {
	if !dv.watch {
		return nil
	}
	return launch("watch_shrink", (dv.qb+255)/256, 1, 256, 1, 0,
		dv.woff, dv.wkeys, dv.wcnt, dv.alive, dv.wbound, dv.qb, dv.p.maxRank)
}

func (dv *device) fetch(keys []uint64, wcnt, walive []int32) error {
	if err := dtoh(keys, dv.top); err != nil {
		return err
	}
	if !dv.watch {
		return nil
	}
	if err := dtoh(wcnt, dv.wcnt); err != nil {
		return err
	}
	return dtoh(walive, dv.alive)
}

func (dv *device) free() {
	cuCtxSynchronize()
	for _, b := range dv.bufs {
		cuMemFree(b)
	}
	dv.bufs = nil
	runtime.UnlockOSThread()
}

// deviceArgmin runs kernel assign_argmin (see NearestCentroids).
func deviceArgmin(x, c mat32.Matrix, cn []float32) (bestv []float32, besti []int32, err error) {
	e, err := newDevice()
	if err != nil {
		return nil, nil, err
	}
	dv := e.(*device)
	defer dv.free()
	n, kc, d := x.Rows, c.Rows, x.Cols
	var px, pc, pcn, pv, pi uint64
	for _, b := range []struct {
		p     *uint64
		bytes int
	}{{&px, 4 * len(x.Data)}, {&pc, 4 * len(c.Data)}, {&pcn, 4 * kc}, {&pv, 4 * n}, {&pi, 4 * n}} {
		if *b.p, err = dv.alloc(b.bytes, "k-means assignment"); err != nil {
			return nil, nil, err
		}
	}
	if err = htod(px, x.Data); err == nil {
		if err = htod(pc, c.Data); err == nil {
			err = htod(pcn, cn)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if err := launch("assign_argmin", (n+63)/64, 1, 16, 16, 0, px, pc, pcn, n, kc, d, pv, pi); err != nil {
		return nil, nil, err
	}
	bestv, besti = make([]float32, n), make([]int32, n)
	if err := dtoh(bestv, pv); err != nil {
		return nil, nil, err
	}
	return bestv, besti, dtoh(besti, pi)
}
