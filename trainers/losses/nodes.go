package losses

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Node helpers: thin wrappers over Gorgonia that panic with a buildError
// (recovered by runner.compile) so that each loss reads like its equation.
// Only operations whose gradients were verified by finite differences here
// are used (Gorgonia v0.9.18 gets these wrong: ByIndices along the last axis,
// the built-in LogSumExp, OuterProd).

const (
	sqrtEps = 1e-12 // inside √ of distances and norms: finite gradient at 0
	maskBig = 1e30  // masked logits are shifted by −maskBig: exp underflows to 0
)

func add(a, b *G.Node) *G.Node { return must(G.Add(a, b)) }
func sub(a, b *G.Node) *G.Node { return must(G.Sub(a, b)) }
func mul(a, b *G.Node) *G.Node { return must(G.HadamardProd(a, b)) }
func exp(a *G.Node) *G.Node    { return must(G.Exp(a)) }
func log(a *G.Node) *G.Node    { return must(G.Log(a)) }
func sqrt(a *G.Node) *G.Node   { return must(G.Sqrt(a)) }
func sq(a *G.Node) *G.Node     { return must(G.Square(a)) }
func relu(a *G.Node) *G.Node   { return must(G.Rectify(a)) }
func neg(a *G.Node) *G.Node    { return must(G.Neg(a)) }

// addS and mulS combine a node with a float64 constant.
func addS(a *G.Node, v float64) *G.Node { return add(a, G.NewConstant(v)) }
func mulS(a *G.Node, v float64) *G.Node { return mul(a, G.NewConstant(v)) }

// total is the sum of all entries (a scalar).
func total(a *G.Node) *G.Node { return must(G.Sum(a)) }

// rowSum sums a matrix along its columns: (N×M) → (N).
func rowSum(a *G.Node) *G.Node { return must(G.Sum(a, 1)) }

// matmulT is a·bᵀ for matrices (N×K)·(M×K) → N×M.
func matmulT(a, b *G.Node) *G.Node { return must(G.Mul(a, must(G.Transpose(b)))) }

// colSub is x − v broadcast along rows: (N×M) − (N) → N×M.
func colSub(x, v *G.Node) *G.Node { return must(G.BroadcastSub(x, v, nil, []byte{1})) }

// colMul is x ⊙ v broadcast along rows: (N×M) ⊙ (N) → N×M.
func colMul(x, v *G.Node) *G.Node { return must(G.BroadcastHadamardProd(x, v, nil, []byte{1})) }

// gather selects rows of a matrix by an index vector (axis 0 only: the
// gradient of ByIndices along the last axis or on vectors is wrong).
func gather(x, idx *G.Node) *G.Node { return must(G.ByIndices(x, idx, 0)) }

// normalize scales every row of x to unit L2 norm: x_i / √(‖x_i‖² + ε).
func normalize(x *G.Node) *G.Node {
	return must(G.BroadcastHadamardDiv(x, sqrt(addS(rowSum(sq(x)), sqrtEps)), nil, []byte{1}))
}

// rowDist is the Euclidean distance between matching rows: (N×D),(N×D) → (N),
// √(‖x_i − y_i‖² + ε).
func rowDist(x, y *G.Node) *G.Node { return sqrt(addS(rowSum(sq(sub(x, y))), sqrtEps)) }

// pick is Σ_j x_ij·onehot_ij: the entry of each row selected by a one-hot mask.
func pick(x, onehot *G.Node) *G.Node { return rowSum(mul(x, onehot)) }

// lse is a numerically safe masked log-sum-exp along rows of x (N×M):
//
//	lse_i = log( [1 +] Σ_j m_ij·exp(x_ij) )
//
// with the leading 1 (an extra zero logit) when one is true, and all entries
// kept when mask is nil. Masked entries are shifted by −1e30 so that exp
// underflows to exactly 0; the row maximum (with 0 when one is set) is
// subtracted before exp and added back. The shift's gradient is 1 − Σsoftmax
// = 0, so ties in Max (which all receive gradient) are harmless. Gorgonia's
// built-in LogSumExp has a wrong gradient in v0.9.18 and is not used.
func (b *builder) lse(x, mask *G.Node, one bool) *G.Node {
	if mask != nil {
		x = add(x, mulS(addS(mask, -1), maskBig))
	}
	m := must(G.Max(x, 1))
	if one {
		n := x.Shape()[0]
		zero := G.NewConstant(tensor.New(tensor.WithShape(n), tensor.WithBacking(make([]float64, n))))
		m = must(G.MaxBetween(m, zero))
	}
	s := rowSum(exp(colSub(x, m)))
	if one {
		s = add(s, exp(neg(m)))
	}
	return add(log(s), m)
}

// unitE returns the rows of E scaled to unit length (built once per graph).
// Losses defined on the hypersphere use it, so a model need not normalise:
// normalising an already unit vector is the identity and its Jacobian
// I − x̂x̂ᵀ projects the gradient exactly as the model's own normalisation would.
func (b *builder) unitE() *G.Node {
	if b.unit == nil {
		b.unit = normalize(b.E)
	}
	return b.unit
}
