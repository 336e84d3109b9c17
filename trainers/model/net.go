package model

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/trainers/param"
)

// layer is one stage of a network (package comment). forward maps the
// rows×in batch x to the rows×out batch y and keeps in its own buffers what
// backward needs; backward, given the same x and y and dL/dy, adds the
// parameters' gradients to their Param.Grad and, if dx is not nil, writes
// dL/dx (rows×in). Buffers are sized for the network's Chunk rows.
type layer interface {
	forward(x []float32, rows int, y []float32)
	backward(x, y, dy []float32, rows int, dx []float32)
}

// net is the machinery every architecture shares: the parameters in
// creation order, the layers, and per layer boundary one activation buffer
// (acts[0] the input, acts[i+1] layer i's output) and one gradient buffer,
// Chunk rows each. An architecture embeds a net made by newNet, creates
// its parameters with newParam and appends its layers with add, the last
// ones by output.
type net struct {
	cfg    Config
	params []*param.Param
	layers []layer
	widths []int // widths[i] = width of acts[i]
	acts   [][]float32
	grads  [][]float32
	// kept is the row count of the latest Forward, whose activations
	// BackwardKept uses (−1 when none are kept: before the first Forward).
	kept int
}

// newNet starts an empty network for the (defaulted) config c with the
// input width c.InDim.
func newNet(c Config) net {
	return net{cfg: c, widths: []int{c.InDim}, kept: -1}
}

// newParam adds a zero parameter of the given shape.
func (n *net) newParam(name string, shape []int, noDecay bool) *param.Param {
	size := 1
	for _, s := range shape {
		size *= s
	}
	q := &param.Param{Name: name, Shape: append([]int(nil), shape...), Data: make([]float32, size), Grad: make([]float32, size), NoDecay: noDecay}
	n.params = append(n.params, q)
	return q
}

// add appends layer l, whose output rows are out values wide.
func (n *net) add(l layer, out int) {
	n.layers = append(n.layers, l)
	n.widths = append(n.widths, out)
}

// uniformFill draws v from U(±bound) with rng, in order.
func uniformFill(rng *rand.Rand, v []float32, bound float64) {
	for i := range v {
		v[i] = float32((2*rng.Float64() - 1) * bound)
	}
}

// output ends the network on features in values wide: the output layer
// z = h W_out + b_out (weight, then bias, drawn from U(±1/√in) with rng),
// E = z/‖z‖₂ if L2Normalize, and allocates the buffers.
func (n *net) output(in int, rng *rand.Rand) {
	c := n.cfg
	w := n.newParam("out.weight", []int{in, c.EmbedDim}, false)
	bound := 1 / math.Sqrt(float64(in))
	uniformFill(rng, w.Data, bound)
	b := n.newParam("out.bias", []int{1, c.EmbedDim}, true)
	uniformFill(rng, b.Data, bound)
	n.add(newDense(w, b), c.EmbedDim)
	if c.L2Normalize {
		n.add(newL2Norm(c.EmbedDim, c.Chunk), c.EmbedDim)
	}
	n.acts = make([][]float32, len(n.widths))
	n.grads = make([][]float32, len(n.widths))
	for i, w := range n.widths {
		n.acts[i] = make([]float32, c.Chunk*w)
		if i > 0 {
			n.grads[i] = make([]float32, c.Chunk*w)
		}
	}
}

// InDim implements Model.
func (n *net) InDim() int { return n.cfg.InDim }

// OutDim implements Model.
func (n *net) OutDim() int { return n.cfg.EmbedDim }

// Chunk implements Model.
func (n *net) Chunk() int { return n.cfg.Chunk }

// Params implements Model.
func (n *net) Params() []*param.Param { return n.params }

// checkRows validates a row count and the length of x (and of g when not
// nil) against it.
func (n *net) checkRows(x, g []float32, rows int) error {
	c := n.cfg
	if rows < 0 || rows > c.Chunk {
		return fmt.Errorf("model: %d rows outside [0, chunk %d]", rows, c.Chunk)
	}
	if x != nil && len(x) < rows*c.InDim {
		return fmt.Errorf("model: input has %d values, need %d×%d", len(x), rows, c.InDim)
	}
	if g != nil && len(g) < rows*c.EmbedDim {
		return fmt.Errorf("model: gradient has %d values, need %d×%d", len(g), rows, c.EmbedDim)
	}
	return nil
}

// forward runs every layer on rows input rows and keeps the activations.
func (n *net) forward(x []float32, rows int) {
	copy(n.acts[0], x[:rows*n.cfg.InDim])
	for i, l := range n.layers {
		l.forward(n.acts[i][:rows*n.widths[i]], rows, n.acts[i+1][:rows*n.widths[i+1]])
	}
	n.kept = rows
}

// backward back-propagates g (rows×EmbedDim) through the kept activations.
func (n *net) backward(g []float32, rows int) {
	last := len(n.layers)
	copy(n.grads[last], g[:rows*n.cfg.EmbedDim])
	for i := last - 1; i >= 0; i-- {
		var dx []float32
		if i > 0 {
			dx = n.grads[i][:rows*n.widths[i]]
		}
		n.layers[i].backward(n.acts[i][:rows*n.widths[i]], n.acts[i+1][:rows*n.widths[i+1]], n.grads[i+1][:rows*n.widths[i+1]], rows, dx)
	}
}

// Forward implements Model.
func (n *net) Forward(x []float32, rows int, out []float32) error {
	if len(out) < rows*n.cfg.EmbedDim {
		return fmt.Errorf("model: output has %d values, need %d×%d", len(out), rows, n.cfg.EmbedDim)
	}
	if err := n.checkRows(x, nil, rows); err != nil {
		return err
	}
	n.forward(x, rows)
	copy(out[:rows*n.cfg.EmbedDim], n.acts[len(n.layers)])
	return nil
}

// Backward implements Model.
func (n *net) Backward(x, g []float32, rows int) error {
	if g == nil {
		return fmt.Errorf("model: Backward needs dL/dE")
	}
	if err := n.checkRows(x, g, rows); err != nil {
		return err
	}
	n.forward(x, rows)
	n.backward(g, rows)
	return nil
}

// BackwardKept implements Model.
func (n *net) BackwardKept(g []float32, rows int) error {
	if g == nil {
		return fmt.Errorf("model: BackwardKept needs dL/dE")
	}
	if n.kept < 0 || rows != n.kept {
		return fmt.Errorf("model: BackwardKept of %d rows, but the latest Forward kept %d", rows, n.kept)
	}
	if err := n.checkRows(nil, g, rows); err != nil {
		return err
	}
	n.backward(g, rows)
	return nil
}

// Close implements Model.
func (n *net) Close() error { return nil }
