//go:build faiss

package faissc

/*
#cgo CFLAGS: -O2 -D_GNU_SOURCE
#cgo LDFLAGS: -lfaiss_c -lgomp -ldl
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/faiss_c.h>
#include <faiss/c_api/Clustering_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/IndexFlat_c.h>

// faiss_get_last_error() is thread-local and valid only until the next faiss
// call on the same OS thread; a goroutine may change OS thread between two
// cgo calls. So every helper that can fail copies the message (malloc'ed,
// freed by Go) inside the very C call that failed, before any other faiss
// call.
static int dml_fail(int rc, char **err) {
	const char *m = faiss_get_last_error();
	*err = strdup(m != NULL && m[0] != 0 ? m : "unknown faiss error");
	return rc;
}

static int dml_fail_msg(const char *m, char **err) {
	*err = strdup(m);
	return -100;
}

// openblas_set_num_threads, looked up at run time so that a faiss built on
// another BLAS (MKL, BLIS) links and runs too.
static void (*dml_blas_threads)(int) = NULL;

static void dml_init(void) {
	void *self = dlopen(NULL, RTLD_LAZY);
	if (self != NULL) {
		dml_blas_threads = (void (*)(int))dlsym(self, "openblas_set_num_threads");
	}
}

// omp_set_num_threads is a per-thread setting: it is set in the same C call
// as the faiss work it governs.
static void dml_threads(int n) {
	if (n > 0) {
		omp_set_num_threads(n);
		if (dml_blas_threads != NULL) dml_blas_threads(n);
	}
}

static int dml_flat_new(FaissIndex **out, int64_t d, int metric, char **err) {
	int rc = metric == METRIC_INNER_PRODUCT
		? faiss_IndexFlatIP_new_with((FaissIndexFlatIP **)out, d)
		: faiss_IndexFlatL2_new_with((FaissIndexFlatL2 **)out, d);
	return rc ? dml_fail(rc, err) : 0;
}

static int dml_add(FaissIndex *idx, int64_t n, const float *x, int threads, char **err) {
	dml_threads(threads);
	int rc = faiss_Index_add(idx, n, x);
	return rc ? dml_fail(rc, err) : 0;
}

static int dml_search(const FaissIndex *idx, int64_t n, const float *x, int64_t k,
		float *dist, int64_t *labels, int threads, char **err) {
	dml_threads(threads);
	int rc = faiss_Index_search(idx, n, x, k, dist, labels);
	return rc ? dml_fail(rc, err) : 0;
}

static int dml_reset(FaissIndex *idx, char **err) {
	int rc = faiss_Index_reset(idx);
	return rc ? dml_fail(rc, err) : 0;
}

// Mirror of faiss::ClusteringIterationStats (faiss 1.7.x); the C API exposes
// the array but not its element size. dml_kmeans checks the layout against
// the C API getters on the first element and skips the history on mismatch.
typedef struct {
	float obj;
	double time;
	double time_search;
	double imbalance_factor;
	int nsplit;
} dml_iter_stats;

// dml_kmeans runs faiss::Clustering (explicit parameters, verbose off) with an
// IndexFlatL2 for the assignment step, copies the centroids, then assigns
// every row to its nearest centroid (IndexFlatL2 over the centroids, k = 1).
// Every object it creates is freed on every path. objs/nsplits (capacity
// maxstats) receive the per-iteration training objective and split counts;
// *nstats is their count, or -1 when the stats layout did not check out.
static int dml_kmeans(int64_t n, int d, int k, const float *x,
		int niter, int nredo, int spherical, int minp, int maxp, int seed, int threads,
		float *centroids, int64_t *assign, float *adist,
		float *objs, int *nsplits, int maxstats, int *nstats, char **err) {
	FaissClusteringParameters cp;
	FaissClustering *clus = NULL;
	FaissIndexFlatL2 *index = NULL;
	int rc = 0;
	float *c = NULL;
	size_t sz = 0;
	FaissClusteringIterationStats *st = NULL;
	size_t nst = 0;

	faiss_ClusteringParameters_init(&cp);
	cp.niter = niter;
	cp.nredo = nredo;
	cp.verbose = 0;
	cp.spherical = spherical;
	cp.int_centroids = 0;
	cp.update_index = 0;
	cp.frozen_centroids = 0;
	cp.min_points_per_centroid = minp;
	cp.max_points_per_centroid = maxp;
	cp.seed = seed;
	dml_threads(threads);

	if ((rc = faiss_Clustering_new_with_params(&clus, d, k, &cp)) != 0) goto fail;
	if ((rc = faiss_IndexFlatL2_new_with(&index, d)) != 0) goto fail;
	if ((rc = faiss_Clustering_train(clus, n, x, (FaissIndex *)index)) != 0) goto fail;
	faiss_Clustering_centroids(clus, &c, &sz);
	if (c == NULL || sz != (size_t)k * (size_t)d) {
		rc = dml_fail_msg("faiss Clustering returned a centroid table of the wrong size", err);
		goto out;
	}
	memcpy(centroids, c, sz * sizeof(float));

	*nstats = 0;
	faiss_Clustering_iteration_stats(clus, &st, &nst);
	if (nst > 0 && st != NULL) {
		const dml_iter_stats *s = (const dml_iter_stats *)st;
		if (faiss_ClusteringIterationStats_obj(st) != s[0].obj ||
				faiss_ClusteringIterationStats_nsplit(st) != s[0].nsplit ||
				faiss_ClusteringIterationStats_imbalance_factor(st) != s[0].imbalance_factor) {
			*nstats = -1;
		} else {
			size_t m = nst < (size_t)maxstats ? nst : (size_t)maxstats;
			for (size_t i = 0; i < m; i++) {
				objs[i] = s[i].obj;
				nsplits[i] = s[i].nsplit;
			}
			*nstats = (int)m;
		}
	}

	if ((rc = faiss_Index_reset((FaissIndex *)index)) != 0) goto fail;
	if ((rc = faiss_Index_add((FaissIndex *)index, k, centroids)) != 0) goto fail;
	if ((rc = faiss_Index_search((FaissIndex *)index, n, x, 1, adist, assign)) != 0) goto fail;
	goto out;
fail:
	dml_fail(rc, err);
out:
	if (index != NULL) faiss_IndexFlatL2_free(index);
	if (clus != NULL) faiss_Clustering_free(clus);
	return rc;
}

// dml_lib_path finds the loaded libfaiss_c shared object (for Version).
static int dml_find_lib(struct dl_phdr_info *info, size_t size, void *data) {
	const char *name = info->dlpi_name;
	if (name == NULL) return 0;
	const char *base = strrchr(name, '/');
	base = base != NULL ? base + 1 : name;
	if (strncmp(base, "libfaiss_c.", 11) == 0) {
		*(const char **)data = name;
		return 1;
	}
	return 0;
}

// Bytes the C allocator has handed out and not taken back (glibc mallinfo2:
// arena + mmapped chunks), -1 where unavailable.
static long long dml_malloc_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();
	return (long long)(mi.uordblks + mi.hblkhd);
#else
	return -1;
#endif
}

static const char *dml_lib_path(void) {
	const char *path = NULL;
	dl_iterate_phdr(dml_find_lib, &path);
	return path;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"
)

func init() { C.dml_init() }

// ErrFaiss is wrapped by every error that faiss itself reported (its C++
// exception text from faiss_get_last_error).
var ErrFaiss = errors.New("faiss")

// ErrInvalid is wrapped by argument errors caught before calling faiss.
var ErrInvalid = errors.New("faissc: invalid argument")

// faissErr turns a failed helper's status into a Go error and frees the C
// copy of the message.
func faissErr(op string, rc C.int, msg *C.char) error {
	if rc == 0 {
		return nil
	}
	s := "unknown faiss error"
	if msg != nil {
		s = strings.TrimSpace(C.GoString(msg))
		C.free(unsafe.Pointer(msg))
	}
	return fmt.Errorf("%w: %s (code %d): %s", ErrFaiss, op, int(rc), s)
}

// Threads maps a requested thread count (<= 0: GOMAXPROCS) to the count
// handed to OpenMP and OpenBLAS.
func Threads(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// LibraryPath is the path of the loaded libfaiss_c shared library ("" if it
// cannot be found among the loaded objects).
func LibraryPath() string {
	p := C.dml_lib_path()
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// Version describes the linked faiss, e.g.
// "faiss 1.7.3-2+b1 (libfaiss_c: /usr/local/lib/libfaiss_c.so)". The faiss
// 1.7 C API has no version call, so the version is read from the stamp that
// scripts/install-faiss.sh writes next to the library (libfaiss_c.stamp,
// "libfaiss-dev=VERSION arch=… recipe=…"); a libfaiss_c built another way
// reports "version unknown".
func Version() string {
	path := LibraryPath()
	if path == "" {
		return "faiss (version unknown; libfaiss_c not found among loaded libraries)"
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "libfaiss_c.stamp")); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if v, ok := strings.CutPrefix(f, "libfaiss-dev="); ok {
				return fmt.Sprintf("faiss %s (libfaiss_c: %s)", v, path)
			}
		}
	}
	return fmt.Sprintf("faiss (version unknown; libfaiss_c: %s)", path)
}

// MallocInUse is the number of bytes the C allocator (malloc, and so C++
// new) has handed out and not yet taken back, from glibc's mallinfo2: the
// leak tests of the faiss backends compare it across many runs. It returns
// -1 where the C library cannot tell.
func MallocInUse() int64 { return int64(C.dml_malloc_in_use()) }

// HeapGrowth is the leak tests' harness: it calls run three times (so
// caches, thread pools and per-thread state exist), then returns by how many
// bytes MallocInUse grew over iters further calls. It returns -1 where
// MallocInUse cannot tell.
func HeapGrowth(iters int, run func()) int64 {
	if MallocInUse() < 0 {
		return -1
	}
	for i := 0; i < 3; i++ {
		run()
	}
	runtime.GC()
	before := MallocInUse()
	for i := 0; i < iters; i++ {
		run()
	}
	runtime.GC()
	return MallocInUse() - before
}

// Metric is faiss's MetricType (same numeric values).
type Metric int

const (
	// InnerProduct is METRIC_INNER_PRODUCT: larger is closer.
	InnerProduct Metric = 0
	// L2 is METRIC_L2: squared Euclidean distance, smaller is closer.
	L2 Metric = 1
)

// Index is a faiss flat (exact) index, IndexFlatL2 or IndexFlatIP, with the
// shape of go-faiss's Index. It owns C memory: call Free when done (Free is
// idempotent). Search may run concurrently from several goroutines; Add,
// Reset and Free must not run concurrently with anything on the same Index.
type Index struct {
	ptr     *C.FaissIndex
	d       int
	metric  Metric
	threads int
}

// NewIndexFlat returns an empty IndexFlatL2 (L2) or IndexFlatIP
// (InnerProduct) of dimension d.
func NewIndexFlat(d int, m Metric) (*Index, error) {
	if d <= 0 {
		return nil, fmt.Errorf("%w: index dimension %d must be positive", ErrInvalid, d)
	}
	if m != L2 && m != InnerProduct {
		return nil, fmt.Errorf("%w: metric %d is neither L2 nor inner product", ErrInvalid, int(m))
	}
	var p *C.FaissIndex
	var msg *C.char
	if err := faissErr("IndexFlat_new", C.dml_flat_new(&p, C.int64_t(d), C.int(m), &msg), msg); err != nil {
		return nil, err
	}
	return &Index{ptr: p, d: d, metric: m}, nil
}

// NewIndexFlatL2 is NewIndexFlat(d, L2).
func NewIndexFlatL2(d int) (*Index, error) { return NewIndexFlat(d, L2) }

// NewIndexFlatIP is NewIndexFlat(d, InnerProduct).
func NewIndexFlatIP(d int) (*Index, error) { return NewIndexFlat(d, InnerProduct) }

// D is the vector dimension.
func (x *Index) D() int { return x.d }

// MetricType is the index metric.
func (x *Index) MetricType() Metric { return x.metric }

// Ntotal is the number of vectors added so far (0 after Free).
func (x *Index) Ntotal() int64 {
	if x.ptr == nil {
		return 0
	}
	return int64(C.faiss_Index_ntotal(x.ptr))
}

// SetThreads sets the OpenMP (and OpenBLAS) thread count of later calls;
// n <= 0 means GOMAXPROCS.
func (x *Index) SetThreads(n int) { x.threads = n }

func (x *Index) rows(v []float32) (int, error) {
	if x.ptr == nil {
		return 0, fmt.Errorf("%w: faiss index used after Free", ErrInvalid)
	}
	if len(v)%x.d != 0 {
		return 0, fmt.Errorf("%w: %d values is not a whole number of %d-dimensional rows", ErrInvalid, len(v), x.d)
	}
	return len(v) / x.d, nil
}

// Add appends the rows of v (row-major, len a multiple of D); faiss copies
// them.
func (x *Index) Add(v []float32) error {
	n, err := x.rows(v)
	if err != nil || n == 0 {
		return err
	}
	var msg *C.char
	rc := C.dml_add(x.ptr, C.int64_t(n), (*C.float)(unsafe.Pointer(&v[0])), C.int(Threads(x.threads)), &msg)
	return faissErr("Index_add", rc, msg)
}

// Search returns, for each row of v, the k nearest indexed vectors in
// faiss's order (distances ascending for L2, descending for inner product;
// id -1 and distance ±MaxFloat32 past the last vector). Row i occupies
// [i*k, (i+1)*k) of both slices.
func (x *Index) Search(v []float32, k int64) (dist []float32, labels []int64, err error) {
	n, err := x.rows(v)
	if err != nil {
		return nil, nil, err
	}
	if k <= 0 {
		return nil, nil, fmt.Errorf("%w: k = %d must be positive", ErrInvalid, k)
	}
	if int64(n) > math.MaxInt/(8*k) {
		return nil, nil, fmt.Errorf("%w: %d queries × k = %d results do not fit in memory", ErrInvalid, n, k)
	}
	dist = make([]float32, int64(n)*k)
	labels = make([]int64, int64(n)*k)
	if err := x.SearchInto(v, k, dist, labels); err != nil {
		return nil, nil, err
	}
	return dist, labels, nil
}

// SearchInto is Search writing into caller buffers of at least rows·k
// entries each (no allocation).
func (x *Index) SearchInto(v []float32, k int64, dist []float32, labels []int64) error {
	n, err := x.rows(v)
	if err != nil {
		return err
	}
	if k <= 0 {
		return fmt.Errorf("%w: k = %d must be positive", ErrInvalid, k)
	}
	if int64(len(dist)) < int64(n)*k || int64(len(labels)) < int64(n)*k {
		return fmt.Errorf("%w: result buffers hold %d/%d entries, need %d", ErrInvalid, len(dist), len(labels), int64(n)*k)
	}
	if n == 0 {
		return nil
	}
	return x.searchRaw(n, v, k, dist, labels)
}

// searchRaw calls faiss without Go-side checks of k (tests use it to reach
// faiss's own error path).
func (x *Index) searchRaw(n int, v []float32, k int64, dist []float32, labels []int64) error {
	var msg *C.char
	var dp *C.float
	var lp *C.int64_t
	if len(dist) > 0 && len(labels) > 0 {
		dp, lp = (*C.float)(unsafe.Pointer(&dist[0])), (*C.int64_t)(unsafe.Pointer(&labels[0]))
	}
	rc := C.dml_search(x.ptr, C.int64_t(n), (*C.float)(unsafe.Pointer(&v[0])), C.int64_t(k), dp, lp,
		C.int(Threads(x.threads)), &msg)
	return faissErr("Index_search", rc, msg)
}

// Reset removes every vector from the index.
func (x *Index) Reset() error {
	if x.ptr == nil {
		return fmt.Errorf("%w: faiss index used after Free", ErrInvalid)
	}
	var msg *C.char
	return faissErr("Index_reset", C.dml_reset(x.ptr, &msg), msg)
}

// Free releases the C index; safe to call more than once.
func (x *Index) Free() {
	if x != nil && x.ptr != nil {
		C.faiss_Index_free(x.ptr)
		x.ptr = nil
	}
}

// ClusteringParams are faiss::ClusteringParameters (Clustering.h), passed
// explicitly to faiss_Clustering_new_with_params. verbose, int_centroids,
// update_index and frozen_centroids are always 0.
type ClusteringParams struct {
	NIter                int  // Lloyd iterations (faiss default 25; Roth et al. 20)
	NRedo                int  // restarts, best objective kept (faiss default 1)
	Spherical            bool // renormalise centroids after each update
	MinPointsPerCentroid int  // below n < k·min faiss only prints a warning
	MaxPointsPerCentroid int  // n > k·max: train on a seeded subsample of k·max rows
	Seed                 int  // faiss's seed (int32)
}

// KMeansOut is what faiss's k-means produced.
type KMeansOut struct {
	Centroids []float32 // k×d, row-major
	Assign    []int64   // nearest centroid of every input row
	Dist      []float32 // its squared L2 distance (faiss float32)
	// Obj is faiss's per-iteration training objective (sum of squared
	// distances of the training points before each centroid update) and
	// Splits its empty-cluster splits; both nil when faiss's iteration
	// stats layout is not the one this binding mirrors.
	Obj    []float64
	Splits []int
}

// KMeans clusters the n×d row-major x into k centroids with faiss's
// Clustering (faiss_Clustering_new_with_params + faiss_Clustering_train
// with an IndexFlatL2) and assigns every row to its nearest centroid with an
// IndexFlatL2 over the centroids (k = 1). threads <= 0 means GOMAXPROCS.
// faiss's own errors (k > n, non-finite input, …) come back wrapping
// ErrFaiss; faiss prints a warning on stderr when n < k·MinPointsPerCentroid.
func KMeans(x []float32, n, d, k int, p ClusteringParams, threads int) (*KMeansOut, error) {
	switch {
	case n <= 0 || d <= 0 || k <= 0:
		return nil, fmt.Errorf("%w: k-means needs n, d, k > 0 (n=%d d=%d k=%d)", ErrInvalid, n, d, k)
	case len(x) != n*d:
		return nil, fmt.Errorf("%w: %d values for %d×%d rows", ErrInvalid, len(x), n, d)
	case d > math.MaxInt32 || k > math.MaxInt32 || int64(k)*int64(d) > math.MaxInt32:
		return nil, fmt.Errorf("%w: k·d = %d·%d too large for faiss's int parameters", ErrInvalid, k, d)
	case p.NIter < 0 || p.NRedo < 1:
		return nil, fmt.Errorf("%w: NIter = %d must be >= 0 and NRedo = %d >= 1", ErrInvalid, p.NIter, p.NRedo)
	case p.MinPointsPerCentroid < 0 || p.MaxPointsPerCentroid < 0 ||
		p.MinPointsPerCentroid > math.MaxInt32 || p.MaxPointsPerCentroid > math.MaxInt32:
		return nil, fmt.Errorf("%w: points-per-centroid bounds must lie in [0, 2^31)", ErrInvalid)
	case p.Seed < math.MinInt32 || p.Seed > math.MaxInt32:
		return nil, fmt.Errorf("%w: seed %d does not fit faiss's 32-bit int", ErrInvalid, p.Seed)
	}
	out := &KMeansOut{
		Centroids: make([]float32, k*d),
		Assign:    make([]int64, n),
		Dist:      make([]float32, n),
	}
	maxStats := max(p.NIter*p.NRedo, 1)
	objs := make([]float32, maxStats)
	splits := make([]C.int, maxStats)
	var nstats C.int
	var msg *C.char
	sph := C.int(0)
	if p.Spherical {
		sph = 1
	}
	rc := C.dml_kmeans(C.int64_t(n), C.int(d), C.int(k), (*C.float)(unsafe.Pointer(&x[0])),
		C.int(p.NIter), C.int(p.NRedo), sph, C.int(p.MinPointsPerCentroid), C.int(p.MaxPointsPerCentroid),
		C.int(p.Seed), C.int(Threads(threads)),
		(*C.float)(unsafe.Pointer(&out.Centroids[0])), (*C.int64_t)(unsafe.Pointer(&out.Assign[0])),
		(*C.float)(unsafe.Pointer(&out.Dist[0])),
		(*C.float)(unsafe.Pointer(&objs[0])), &splits[0], C.int(maxStats), &nstats, &msg)
	if err := faissErr("Clustering_train", rc, msg); err != nil {
		return nil, err
	}
	if nstats >= 0 {
		out.Obj = make([]float64, nstats)
		out.Splits = make([]int, nstats)
		for i := range out.Obj {
			out.Obj[i] = float64(objs[i])
			out.Splits[i] = int(splits[i])
		}
	}
	return out, nil
}
