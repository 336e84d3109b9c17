package model

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// layerNormOp is LayerNorm (Ba et al. 2016) over the rows of z (B×n) with
// per-column γ and β (1×n):
//
//	μ = mean_j z_j,  σ² = mean_j (z_j − μ)²,  s = √(σ² + ε),
//	x̂_j = (z_j − μ)/s,  y_j = x̂_j·γ_j + β_j,
//
// in one pass per row (Gorgonia's graph of Mean, broadcast Sub, Square,
// Mean, Sqrt, broadcast Div, Mul and Add would Repeat the row statistics
// and γ, β to B×n copies and allocate each intermediate). Row sums are
// accumulated in float64 and rounded once. Its gradients are
// layerNormGradOp (z), layerNormGammaGradOp (γ) and colSumOp (β).
type layerNormOp struct {
	opBase
	rows, cols int
	eps        float32
}

func (op layerNormOp) Arity() int    { return 3 }
func (op layerNormOp) Type() hm.Type { return hm.NewFnType(matType(), matType(), matType(), matType()) }
func (op layerNormOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.rows, op.cols}, nil
}
func (op layerNormOp) String() string {
	return fmt.Sprintf("LayerNorm{%d×%d, ε=%g}", op.rows, op.cols, op.eps)
}
func (op layerNormOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op layerNormOp) Hashcode() uint32                  { return hashOf(op) }
func (op layerNormOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }
func (op layerNormOp) DiffWRT(int) []bool                { return []bool{true, true, true} }

// stats returns μ and s of row z.
func (op layerNormOp) stats(z []float32) (mu, s float32) {
	var sum float64
	for _, v := range z {
		sum += float64(v)
	}
	mu = float32(sum / float64(len(z)))
	var sq float64
	for _, v := range z {
		d := float64(v - mu)
		sq += d * d
	}
	return mu, float32(math.Sqrt(float64(float32(sq/float64(len(z))) + op.eps)))
}

func (op layerNormOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	n := op.rows * op.cols
	z, err := f32(in[0], n, "layer-norm input")
	if err != nil {
		return nil, err
	}
	gamma, err := f32(in[1], op.cols, "layer-norm γ")
	if err != nil {
		return nil, err
	}
	beta, err := f32(in[2], op.cols, "layer-norm β")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{op.rows, op.cols})
	y, err := f32(out, n, "layer-norm output")
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i += op.cols {
		zi, yi := z[i:i+op.cols], y[i:i+op.cols]
		mu, s := op.stats(zi)
		for j, v := range zi {
			yi[j] = (v-mu)/s*gamma[j] + beta[j]
		}
	}
	return out, nil
}

func (op layerNormOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dz, err := G.ApplyOp(layerNormGradOp{op}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	dg, err := G.ApplyOp(layerNormGammaGradOp{op}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(colSumOp{rows: op.rows, cols: op.cols}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, dg, db}, nil
}

// layerNormGradOp is ∂/∂z of layerNormOp for the output gradient dy: with
// g = dy·γ, dz = (g − mean(g) − x̂·mean(g·x̂)) / s per row.
type layerNormGradOp struct{ ln layerNormOp }

func (op layerNormGradOp) Arity() int { return 3 }
func (op layerNormGradOp) Type() hm.Type {
	return hm.NewFnType(matType(), matType(), matType(), matType())
}
func (op layerNormGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.ln.rows, op.ln.cols}, nil
}
func (op layerNormGradOp) ReturnsPtr() bool                  { return false }
func (op layerNormGradOp) CallsExtern() bool                 { return false }
func (op layerNormGradOp) OverwritesInput() int              { return -1 }
func (op layerNormGradOp) String() string                    { return "∂z " + op.ln.String() }
func (op layerNormGradOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op layerNormGradOp) Hashcode() uint32                  { return hashOf(op) }
func (op layerNormGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

func (op layerNormGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	ln := op.ln
	n := ln.rows * ln.cols
	z, err := f32(in[0], n, "layer-norm-grad input")
	if err != nil {
		return nil, err
	}
	gamma, err := f32(in[1], ln.cols, "layer-norm-grad γ")
	if err != nil {
		return nil, err
	}
	dy, err := f32(in[2], n, "layer-norm-grad gradient")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{ln.rows, ln.cols})
	dz, err := f32(out, n, "layer-norm-grad output")
	if err != nil {
		return nil, err
	}
	inv := 1 / float64(ln.cols)
	for i := 0; i < n; i += ln.cols {
		zi, dyi, dzi := z[i:i+ln.cols], dy[i:i+ln.cols], dz[i:i+ln.cols]
		mu, s := ln.stats(zi)
		var sg, sgx float64
		for j, v := range zi {
			g := float64(dyi[j]) * float64(gamma[j])
			sg += g
			sgx += g * float64((v-mu)/s)
		}
		mg, mgx := sg*inv, sgx*inv
		for j, v := range zi {
			g := float64(dyi[j]) * float64(gamma[j])
			dzi[j] = float32((g - mg - float64((v-mu)/s)*mgx) / float64(s))
		}
	}
	return out, nil
}

// layerNormGammaGradOp is ∂/∂γ of layerNormOp: Σ_rows dy·x̂ per column
// (ascending rows).
type layerNormGammaGradOp struct{ ln layerNormOp }

func (op layerNormGammaGradOp) Arity() int    { return 2 }
func (op layerNormGammaGradOp) Type() hm.Type { return hm.NewFnType(matType(), matType(), matType()) }
func (op layerNormGammaGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{1, op.ln.cols}, nil
}
func (op layerNormGammaGradOp) ReturnsPtr() bool      { return false }
func (op layerNormGammaGradOp) CallsExtern() bool     { return false }
func (op layerNormGammaGradOp) OverwritesInput() int  { return -1 }
func (op layerNormGammaGradOp) String() string        { return "∂γ " + op.ln.String() }
func (op layerNormGammaGradOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op layerNormGammaGradOp) Hashcode() uint32      { return hashOf(op) }
func (op layerNormGammaGradOp) Do(in ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op layerNormGammaGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	ln := op.ln
	n := ln.rows * ln.cols
	z, err := f32(in[0], n, "layer-norm-γ-grad input")
	if err != nil {
		return nil, err
	}
	dy, err := f32(in[1], n, "layer-norm-γ-grad gradient")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{1, ln.cols})
	dg, err := f32(out, ln.cols, "layer-norm-γ-grad output")
	if err != nil {
		return nil, err
	}
	clear(dg)
	for i := 0; i < n; i += ln.cols {
		zi, dyi := z[i:i+ln.cols], dy[i:i+ln.cols]
		mu, s := ln.stats(zi)
		for j, v := range zi {
			dg[j] += dyi[j] * ((v - mu) / s)
		}
	}
	return out, nil
}
