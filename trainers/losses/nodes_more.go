package losses

import (
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/trainers/miners"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Extra node helpers and batch utilities used by the losses of Roth et al. 2020 §A.1
// (angular, generalised lifted, histogram, quadruplet, SNR, SoftTriple),
// Fehérvári et al. 2019 (lifted, proxy-triplet, prototypical, ranked list,
// structured clustering) and Patel et al. 2024 (RS@k, Smooth-AP). Like
// nodes.go they panic with a buildError that runner.compile recovers; every
// one is covered by the finite-difference checks of TestGradients through
// the losses that use it.

func div(a, b *G.Node) *G.Node { return must(G.HadamardDiv(a, b)) }
func abs(a *G.Node) *G.Node    { return must(G.Abs(a)) }

// sigm is the logistic function σ(x) = ½ + ½·tanh(x/2). Gorgonia's Sigmoid
// returns exactly 1 above x = 19 (an error of 5.6·10⁻⁹ that matters at the
// small default temperatures of Smooth-AP and RS@k); tanh is exact to rounding.
func sigm(a *G.Node) *G.Node { return addS(mulS(must(G.Tanh(mulS(a, 0.5))), 0.5), 0.5) }

// colDiv is x ⊘ v broadcast along rows: (N×M) ⊘ (N) → N×M.
func colDiv(x, v *G.Node) *G.Node { return must(G.BroadcastHadamardDiv(x, v, nil, []byte{1})) }

// mv is the matrix–vector product (N×M)·(M) → (N).
func mv(m, v *G.Node) *G.Node { return must(G.Mul(m, v)) }

// maxOf is the element-wise maximum of equally shaped nodes.
func maxOf(a, b *G.Node) *G.Node { return must(G.MaxBetween(a, b)) }

// minS is min(x, k) = x − [x − k]₊, element-wise.
func minS(x *G.Node, k float64) *G.Node { return sub(x, relu(addS(x, -k))) }

// gatherVec selects entries of a vector by index, (N) → (T), through a
// (N×1) matrix: ByIndices on a vector has a wrong gradient (Gorgonia v0.9.18).
func gatherVec(v, idx *G.Node) *G.Node {
	n := v.Shape()[0]
	t := idx.Shape()[0]
	col := must(G.Reshape(v, tensor.Shape{n, 1}))
	return must(G.Reshape(gather(col, idx), tensor.Shape{t}))
}

// constant is a fixed tensor node of the graph (a leaf without gradient;
// G.NewConstant nodes have no graph and cannot be broadcast).
func (b *builder) constant(data []float64, shp ...int) *G.Node {
	t := tensor.New(tensor.WithShape(shp...), tensor.WithBacking(data))
	return G.NewTensor(b.g, tensor.Float64, len(shp), G.WithShape(shp...), G.WithValue(t))
}

// rowsOf repeats the vector v (M) as every row of an N×M matrix, by the
// product of an N×1 column of ones with v as a 1×M row (OuterProd fails at
// run time in Gorgonia v0.9.18).
func (b *builder) rowsOf(v *G.Node, n int) *G.Node {
	m := v.Shape()[0]
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	return must(G.Mul(b.constant(ones, n, 1), must(G.Reshape(v, tensor.Shape{1, m}))))
}

// pairDistE is the B×B Euclidean distance matrix of the rows of x,
// √([‖x_i‖² + ‖x_j‖² − 2x_iᵀx_j]₊ + ε), built as A + Aᵀ with
// A_ij = ‖x_i‖² − x_iᵀx_j (x xᵀ is symmetric), so no row broadcast is needed.
func pairDistE(x *G.Node) *G.Node {
	a := colSub(mulS(matmulT(x, x), -1), neg(rowSum(sq(x))))
	d2 := add(a, must(G.Transpose(a)))
	return sqrt(addS(relu(d2), sqrtEps))
}

// unitDist is the distance matrix of unit vectors from their cosine matrix S:
// √([2 − 2S]₊ + ε).
func unitDist(S *G.Node) *G.Node { return sqrt(addS(relu(addS(mulS(S, -2), 2)), sqrtEps)) }

// lse2 is log(e^x + e^y) element-wise, shifted by max(x, y) (the shift's
// gradient cancels, so MaxBetween's handling of ties is irrelevant).
func lse2(x, y *G.Node) *G.Node {
	m := maxOf(x, y)
	return add(log(add(exp(sub(x, m)), exp(sub(y, m)))), m)
}

// mineTriplets validates the batch and runs the miner of t on the pairwise
// distances of the unit-normalised batch (the first half of tuples.forward,
// for tuple losses that fill extra inputs: quadruplet, SNR).
func mineTriplets(t *tuples, b Batch, grad []float32) (miners.Triplets, error) {
	if err := checkBatch(b, grad, t.numClasses, true); err != nil {
		return miners.Triplets{}, fmt.Errorf("%s: %w", t.name, err)
	}
	if ds, ok := t.miner.(miners.DimSetter); ok {
		ds.SetDim(b.D)
	}
	dist := pairDist(unitRows(b.Emb, b.B, b.D), b.B, b.D)
	if err := miners.Check(dist, b.Labels, b.Rng); err != nil {
		return miners.Triplets{}, fmt.Errorf("%s: %w", t.name, err)
	}
	tr := t.miner.Mine(dist, b.Labels, b.Rng)
	if err := checkTriplets(tr, b.Labels, t.switched); err != nil {
		return miners.Triplets{}, fmt.Errorf("%s: miner %s: %w", t.name, t.miner.Name(), err)
	}
	return tr, nil
}

// capacityFor rounds n up to a positive multiple of B (the tuple/pair
// capacity T of a compiled graph, so that few shapes are compiled).
func capacityFor(n, B int) int {
	c := B
	for c < n {
		c += B
	}
	return c
}

// posPairs lists the ordered (q, x) pairs with x ≠ q and y_x = y_q, and the
// number of positives of each sample.
func posPairs(labels []int) (q, x []int, npos []int) {
	npos = make([]int, len(labels))
	for i, yi := range labels {
		for j, yj := range labels {
			if j != i && yj == yi {
				q, x = append(q, i), append(x, j)
				npos[i]++
			}
		}
	}
	return q, x, npos
}

// checkFinite rejects NaN and infinite hyper-parameters.
func checkFinite(vals map[string]float64) error {
	for k, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("hyper-parameter %s must be finite, got %v", k, v)
		}
	}
	return nil
}

// intHyper reads an integer hyper-parameter ≥ lo.
func intHyper(c Config, name string, lo int) (int, error) {
	v := c.hyperParam(name)
	if v != math.Trunc(v) || v < float64(lo) || v > 1e6 {
		return 0, fmt.Errorf("hyper-parameter %s must be an integer ≥ %d, got %v", name, lo, v)
	}
	return int(v), nil
}
