package model

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Two elementwise ops of the MLP written as single branch-free loops over
// preallocated memory. Gorgonia builds the bias add of a linear map as a
// Repeat of the bias to B rows plus an add, and its ReLU as x ⊙ (x ≥ 0)
// with a separate mask tensor; each allocates and walks B×n values more
// than once per pass. The numbers are the same up to the sign of zeros:
// out = z + b row by row, ReLU(x) = max(x, 0) (+0 where Gorgonia's x·0
// gives −0; NaN stays NaN), its gradient g·[x ≥ 0] (+0 where g·0 may give
// −0), and the bias gradient the column sums of g in ascending rows.

// biasAddOp is z + b for z (B×n) and a bias row b (1×n).
type biasAddOp struct {
	opBase
	rows, cols int
}

func (op biasAddOp) Arity() int    { return 2 }
func (op biasAddOp) Type() hm.Type { return hm.NewFnType(matType(), matType(), matType()) }
func (op biasAddOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.rows, op.cols}, nil
}
func (op biasAddOp) String() string                    { return fmt.Sprintf("AddBias{%d×%d}", op.rows, op.cols) }
func (op biasAddOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op biasAddOp) Hashcode() uint32                  { return hashOf(op) }
func (op biasAddOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }
func (op biasAddOp) DiffWRT(int) []bool                { return []bool{true, true} }

func (op biasAddOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	n := op.rows * op.cols
	z, err := f32(in[0], n, "bias-add input")
	if err != nil {
		return nil, err
	}
	b, err := f32(in[1], op.cols, "bias-add bias")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{op.rows, op.cols})
	o, err := f32(out, n, "bias-add output")
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i += op.cols {
		zi, oi := z[i:i+op.cols], o[i:i+op.cols]
		for j, v := range zi {
			oi[j] = v + b[j]
		}
	}
	return out, nil
}

func (op biasAddOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	db, err := G.ApplyOp(colSumOp{rows: op.rows, cols: op.cols}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{grad, db}, nil
}

// colSumOp sums the rows of g (B×n) into a 1×n row, ascending rows.
type colSumOp struct {
	opBase
	rows, cols int
}

func (op colSumOp) Arity() int    { return 1 }
func (op colSumOp) Type() hm.Type { return hm.NewFnType(matType(), matType()) }
func (op colSumOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{1, op.cols}, nil
}
func (op colSumOp) String() string                    { return fmt.Sprintf("SumRows{%d×%d}", op.rows, op.cols) }
func (op colSumOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op colSumOp) Hashcode() uint32                  { return hashOf(op) }
func (op colSumOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

func (op colSumOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	n := op.rows * op.cols
	g, err := f32(in[0], n, "row-sum input")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{1, op.cols})
	s, err := f32(out, op.cols, "row-sum output")
	if err != nil {
		return nil, err
	}
	clear(s)
	for i := 0; i < n; i += op.cols {
		gi := g[i : i+op.cols]
		for j, v := range gi {
			s[j] += v
		}
	}
	return out, nil
}

// reluOp is x·[x ≥ 0] elementwise on a B×n matrix.
type reluOp struct {
	opBase
	rows, cols int
}

func (op reluOp) Arity() int    { return 1 }
func (op reluOp) Type() hm.Type { return hm.NewFnType(matType(), matType()) }
func (op reluOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.rows, op.cols}, nil
}
func (op reluOp) String() string                    { return fmt.Sprintf("ReLU{%d×%d}", op.rows, op.cols) }
func (op reluOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op reluOp) Hashcode() uint32                  { return hashOf(op) }
func (op reluOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }
func (op reluOp) DiffWRT(int) []bool                { return []bool{true} }

func (op reluOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	n := op.rows * op.cols
	x, err := f32(in[0], n, "relu input")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{op.rows, op.cols})
	o, err := f32(out, n, "relu output")
	if err != nil {
		return nil, err
	}
	for i, v := range x {
		o[i] = max(v, 0)
	}
	return out, nil
}

func (op reluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(reluGradOp(op), inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// reluGradOp is g·[x ≥ 0] for the ReLU input x and its output gradient g.
type reluGradOp reluOp

func (op reluGradOp) Arity() int    { return 2 }
func (op reluGradOp) Type() hm.Type { return hm.NewFnType(matType(), matType(), matType()) }
func (op reluGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.rows, op.cols}, nil
}
func (op reluGradOp) String() string                    { return fmt.Sprintf("∂ReLU{%d×%d}", op.rows, op.cols) }
func (op reluGradOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op reluGradOp) Hashcode() uint32                  { return hashOf(op) }
func (op reluGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

func (op reluGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	n := op.rows * op.cols
	x, err := f32(in[0], n, "relu-grad input")
	if err != nil {
		return nil, err
	}
	g, err := f32(in[1], n, "relu-grad gradient")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{op.rows, op.cols})
	o, err := f32(out, n, "relu-grad output")
	if err != nil {
		return nil, err
	}
	g = g[:len(x)]
	for i, v := range x {
		o[i] = math.Float32frombits(math.Float32bits(g[i]) & geZero(v))
	}
	return out, nil
}

// geZero is all ones if v ≥ 0 (−0 included), else zero (NaN included),
// without a branch: random signs make a branch mispredict half the time.
func geZero(v float32) uint32 {
	b := math.Float32bits(v)
	neg := b >> 31                                                   // 1 for negative numbers, −0 and negative NaNs
	zero := uint32((uint64(b<<1) - 1) >> 63)                         // 1 for ±0
	nan := uint32((uint64(0x7f800000) - uint64(b&0x7fffffff)) >> 63) // 1 for NaN
	return -((1 - neg | zero) &^ nan)
}

// relu applies reluOp to the matrix h.
func relu(h *G.Node) (*G.Node, error) {
	s := h.Shape()
	return G.ApplyOp(reluOp{rows: s[0], cols: s[1]}, h)
}
