package exactdist

import "cmp"

// Kind is the distance a Ranker orders by.
type Kind int

const (
	// SquaredL2 ranks by ‖x − a‖², smallest first.
	SquaredL2 Kind = iota
	// InnerProduct ranks by ⟨x, a⟩, largest first.
	InnerProduct
	// Cosine ranks by cos(x, a), largest first; no row may be zero.
	Cosine
)

// Cand is a candidate row of one query: its float64 key V (smaller ranks
// first: ‖x − a‖², −⟨x, a⟩ or −⟨x, a⟩/‖a‖), the bound Err on V's error, and
// its index.
type Cand struct {
	V, Err float64
	ID     int32
}

// Ranker orders the candidates of the query X exactly: by the exact
// distance, ties to the lower index.
type Ranker struct {
	Kind Kind
	X    []float32
	Row  func(id int32) []float32
}

// Cand returns row id's candidate.
func (r Ranker) Cand(id int32) Cand {
	a := r.Row(id)
	var v, e float64
	switch r.Kind {
	case SquaredL2:
		v, e = L2(r.X, a)
	case InnerProduct:
		v, e = IP(r.X, a)
		v = -v
	default:
		v, e = Cos(r.X, a)
		v = -v
	}
	return Cand{V: v, Err: e, ID: id}
}

// Compare orders a and b: the float64 keys decide where their error
// intervals are disjoint, exact arithmetic elsewhere.
func (r Ranker) Compare(a, b Cand) int {
	if c := r.order(a, b); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Ties reports whether a and b are exactly as far from the query.
func (r Ranker) Ties(a, b Cand) bool { return r.order(a, b) == 0 }

// apart orders a and b when their error intervals are disjoint, else 0.
func apart(a, b Cand) int {
	if a.V+a.Err < b.V-b.Err {
		return -1
	}
	if b.V+b.Err < a.V-a.Err {
		return 1
	}
	return 0
}

func (r Ranker) order(a, b Cand) int {
	if a.Err == 0 && b.Err == 0 {
		return cmp.Compare(a.V, b.V)
	}
	if c := apart(a, b); c != 0 {
		return c
	}
	ra, rb := r.Row(a.ID), r.Row(b.ID)
	switch r.Kind {
	case SquaredL2:
		// The compensated sums first: exact ties and all but the nearest
		// ties are settled without integers.
		va, ea := L2Tight(r.X, ra)
		vb, eb := L2Tight(r.X, rb)
		if ea == 0 && eb == 0 {
			return cmp.Compare(va, vb)
		}
		if c := apart(Cand{V: va, Err: ea}, Cand{V: vb, Err: eb}); c != 0 {
			return c
		}
		return CmpL2(r.X, ra, rb)
	case InnerProduct:
		return -CmpIP(r.X, ra, rb)
	default:
		return -CmpCos(r.X, ra, rb)
	}
}
