package model

// BLASName names the BLAS that Gorgonia's matrix products use in this build:
// "gonum" (pure Go, default) or "openblas" (build tag openblas, cgo).
var BLASName = "gonum"
