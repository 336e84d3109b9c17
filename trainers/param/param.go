// Package param holds the learnable-tensor type that models, losses, the
// optimiser and checkpoints share.
//
// It sits below all of them so that a model does not import the loss
// package, nor a loss the model package, just to name a parameter.
package param

// Param is a learnable tensor owned by a model or a loss. Data and Grad
// have equal length; the owner's forward pass overwrites Grad.
type Param struct {
	Name    string
	Shape   []int
	Data    []float32
	Grad    []float32
	LRScale float64 // learning-rate multiplier relative to the base rate; 0 means 1
	// LR, if > 0, is an absolute learning rate that overrides the base rate
	// (Roth et al. 2020 §A.1 sets the proxies' and the margin β's rates so).
	LR float64
	// NoDecay excludes the parameter from weight decay.
	NoDecay bool
}
