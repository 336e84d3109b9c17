package knn

import (
	"context"
	"errors"
	"fmt"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/registry"
)

// Matrix is the dense row-major float32 matrix every stage passes
// (internal/mat32). The alias lets code outside this module build one for
// Searcher.Search, metrics.Evaluate and the clusterers.
type Matrix = mat32.Matrix

// Metric selects the similarity measure.
type Metric int

const (
	// L2 is squared Euclidean distance; smaller is closer.
	L2 Metric = iota
	// IP is the inner product; larger is closer. Cosine similarity is IP on
	// L2-normalised rows.
	IP
)

func (m Metric) String() string {
	switch m {
	case L2:
		return "l2"
	case IP:
		return "ip"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// Exclusion says which database rows a query must not return.
type Exclusion int

const (
	// ExcludeNone returns every database row.
	ExcludeNone Exclusion = iota
	// ExcludeSelf drops database row i from query i (leave-one-out on one
	// set), row Options.SelfOffset+i where the queries are a range of it.
	ExcludeSelf
)

// Options configure one search.
type Options struct {
	Metric  Metric
	Exclude Exclusion
	// SelfRange: under ExcludeSelf the queries are database rows
	// SelfOffset … SelfOffset+len(q)−1 (one shard of a leave-one-out
	// evaluation) rather than the database itself. Backends for which
	// SelfOffsets reports false refuse it.
	SelfRange  bool
	SelfOffset int
	// Threads caps the parallelism; <= 0 means all cores (GOMAXPROCS).
	Threads int
	// Progress, if non-nil, is called with the number of queries finished so
	// far (monotone, from any goroutine, serialised by the searcher).
	Progress func(done, total int)
	// Watch, if non-nil, also asks for the ranks of chosen database rows in
	// each query's full ranking (see Watch). Only backends for which
	// Watches reports true honour it.
	Watch *Watch
}

// Watch asks for the exact 1-based rank of given database rows in each
// query's ranking (by the searcher's own distances, ties to the lower
// index, excluded rows not counted), as long as the rank is at most
// MaxRank. Retrieval metrics use it for the positives of each query: the
// ranks of the same-class items are all mAP@1000 needs, so the k-NN depth
// can stay at what Recall@k and MAP@R need instead of 1000.
type Watch struct {
	// IDs[i] are the database rows watched for query i: distinct, in range,
	// and without i itself under ExcludeSelf. len(IDs) = number of queries.
	IDs [][]int32
	// MaxRank bounds the ranks reported; it is also what makes watching
	// cheap (candidates beyond it are not counted). >= 1.
	MaxRank int
	// Band and Order, both set, ask for the ranks of the exact distances
	// rather than the searcher's own: Band(i, v) ≥ 0 bounds how far apart
	// the searcher's values (squared L2, or −IP) of two rows of query i
	// near v can be while their exact distances are in the other order,
	// and Order(i, ids) sorts ids by exact distance to query i (ties to
	// the lower index); it may be called concurrently. Rows whose values
	// lie in the band of a watched row are put in order by Order, all
	// others keep the searcher's order. Neighbors.RanksExact says whether
	// the searcher did so.
	Band  func(i int, v float32) float32
	Order func(i int, ids []int32)
}

// Watches reports whether s honours Options.Watch.
func Watches(s Searcher) bool {
	w, ok := s.(interface{ Watches() bool })
	return ok && w.Watches()
}

// WatchesExactly reports whether s honours Watch.Band and Watch.Order
// (Neighbors.RanksExact).
func WatchesExactly(s Searcher) bool {
	w, ok := s.(interface{ WatchesExactly() bool })
	return ok && w.WatchesExactly()
}

// SelfOffsets reports whether s honours Options.SelfRange.
func SelfOffsets(s Searcher) bool {
	o, ok := s.(interface{ SelfOffsets() bool })
	return ok && o.SelfOffsets()
}

// Neighbors holds the k nearest database rows of each query, row-major
// (query i occupies [i*K, (i+1)*K)).
type Neighbors struct {
	N, K int
	IDs  []int32   // -1 where fewer than K candidates exist
	Dist []float32 // squared L2 (ascending) or IP (descending)
	// Ranks[i] are the ascending ranks (1-based, <= Watch.MaxRank) of the
	// rows of Options.Watch.IDs[i] that rank within MaxRank; nil without
	// a Watch.
	Ranks [][]int32
	// RanksExact: Ranks are those of the exact distances (Watch.Band).
	RanksExact bool
}

// IDsOf returns the neighbour ids of query i.
func (n *Neighbors) IDsOf(i int) []int32 { return n.IDs[i*n.K : (i+1)*n.K] }

// DistOf returns the neighbour distances of query i.
func (n *Neighbors) DistOf(i int) []float32 { return n.Dist[i*n.K : (i+1)*n.K] }

// Searcher is an exact k-NN backend.
type Searcher interface {
	// Name identifies the backend ("exact", "faiss", "faiss-gpu").
	Name() string
	// Search returns the k nearest rows of db for each row of q.
	Search(ctx context.Context, q, db mat32.Matrix, k int, opt Options) (*Neighbors, error)
}

// ErrBadInput is wrapped by every input-validation error of a Searcher.
var ErrBadInput = errors.New("knn: bad input")

// Validate checks the arguments every Searcher shares.
func Validate(q, db mat32.Matrix, k int, opt Options) error {
	switch {
	case q.Cols != db.Cols:
		return fmt.Errorf("%w: query dimension %d differs from database dimension %d", ErrBadInput, q.Cols, db.Cols)
	case len(q.Data) != q.Rows*q.Cols || len(db.Data) != db.Rows*db.Cols:
		return fmt.Errorf("%w: matrix data length does not match its shape", ErrBadInput)
	case k <= 0:
		return fmt.Errorf("%w: k = %d must be positive", ErrBadInput, k)
	case db.Rows == 0:
		return fmt.Errorf("%w: empty database", ErrBadInput)
	case opt.Exclude == ExcludeSelf && !opt.SelfRange && q.Rows != db.Rows:
		return fmt.Errorf("%w: self-exclusion needs query and database of equal size (%d vs %d)", ErrBadInput, q.Rows, db.Rows)
	case (opt.SelfRange || opt.SelfOffset != 0) && (opt.Exclude != ExcludeSelf || !opt.SelfRange || opt.SelfOffset < 0 || opt.SelfOffset+q.Rows > db.Rows):
		return fmt.Errorf("%w: self-exclusion offset %d for %d queries in a database of %d rows", ErrBadInput, opt.SelfOffset, q.Rows, db.Rows)
	case opt.Metric != L2 && opt.Metric != IP:
		return fmt.Errorf("%w: unknown metric %v", ErrBadInput, opt.Metric)
	}
	if w := opt.Watch; w != nil {
		if len(w.IDs) != q.Rows || w.MaxRank < 1 {
			return fmt.Errorf("%w: watch lists for %d queries (want %d), MaxRank %d", ErrBadInput, len(w.IDs), q.Rows, w.MaxRank)
		}
		seen := make([]int32, db.Rows) // query+1 that last watched the row
		for i, ids := range w.IDs {
			for _, id := range ids {
				if id < 0 || int(id) >= db.Rows || (opt.Exclude == ExcludeSelf && int(id) == opt.SelfOffset+i) {
					return fmt.Errorf("%w: query %d watches row %d (database has %d rows)", ErrBadInput, i, id, db.Rows)
				}
				if seen[id] == int32(i+1) {
					return fmt.Errorf("%w: query %d watches row %d twice", ErrBadInput, i, id)
				}
				seen[id] = int32(i + 1)
			}
		}
	}
	return nil
}

// Backend names: each is written here once and used by every command,
// help text and test.
const (
	ExactName    = "exact"
	FaissName    = "faiss"
	FaissGPUName = "faiss-gpu"
)

// Backend is one registered k-NN backend.
type Backend struct {
	Summary string
	New     func() (Searcher, error)
}

// Backends holds the k-NN backends. The faiss backends are declared here
// with how to get them; their build-tagged files provide them.
var Backends = registry.New[Backend]("k-NN backend")

func init() {
	Backends.Register(ExactName, Backend{
		Summary: "pure-Go blocked float32 kernel (" + KernelName() + "), exact, deterministic",
		New:     func() (Searcher, error) { return Exact{}, nil },
	})
	Backends.Unavailable(FaissName, "faiss IndexFlat on CPU", "build with -tags faiss; run scripts/install-faiss.sh (make faiss) first")
	Backends.Unavailable(FaissGPUName, "faiss on CUDA", "build with -tags faiss,cuda; see docs/faiss-gpu.md")
}

// New returns the backend named name.
func New(name string) (Searcher, error) {
	b, err := Backends.Get(name)
	if err != nil {
		return nil, err
	}
	return b.New()
}
