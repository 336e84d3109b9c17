package plots

import (
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/spectra"
)

// An embedding file's spectrum is spectra's on the matrix read; with labels
// the class-averaged spectrum counts only the classes not all zero.
func TestLoadEmbeddingSpectrum(t *testing.T) {
	dir := t.TempDir()
	x := mat32.Matrix{Rows: 6, Cols: 3, Data: []float32{
		3, 0, 0, 1, 1, 0, 0, 2, 1, // class 7
		0, 0, 0, 0, 0, 0, // class 8: all zero
		1, 0, 2, // class 9
	}}
	labels := []int32{7, 7, 7, 8, 8, 9}
	ep, lp := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	if err := arrays.SaveNPY(ep, x); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lp, labels); err != nil {
		t.Fatal(err)
	}
	sp, err := LoadEmbeddingSpectrum(ep, lp, true)
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := spectra.SingularValues(x)
	pc, skipped, _ := spectra.PerClass(x, labels)
	if !reflect.DeepEqual(sp.Singular, sv) || !reflect.DeepEqual(sp.PerClass, pc) || sp.Skipped != skipped || skipped != 1 || sp.Classes != 2 {
		t.Fatalf("got %v %v classes %d skipped %d; want %v %v skipped %d", sp.Singular, sp.PerClass, sp.Classes, sp.Skipped, sv, pc, skipped)
	}
	if sp, err := LoadEmbeddingSpectrum(ep, "", false); err != nil || sp.Singular != nil || sp.PerClass != nil || sp.X.Rows != 6 {
		t.Fatalf("no spectrum asked for: %+v %v", sp, err)
	}
	short := filepath.Join(dir, "short.npy")
	if err := arrays.SaveLabelsNPY(short, labels[:4]); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadEmbeddingSpectrum(ep, short, true); err == nil {
		t.Fatal("4 labels for 6 rows accepted")
	}
}

// The curve is the sorted spectrum scaled by mode over x = 1…top.
func TestEmbeddingSpectrumSeries(t *testing.T) {
	s, err := EmbeddingSpectrumSeries("e", []float64{1, 4, 3}, "max", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.X, []float64{1, 2}) || !reflect.DeepEqual(s.Y, []float64{1, 0.75}) || s.Label != "e" {
		t.Fatalf("got %+v", s)
	}
	s, _ = EmbeddingSpectrumSeries("e", []float64{1, 3}, "sum", 0)
	if math.Abs(s.Y[0]-0.75) > 1e-15 || math.Abs(s.Y[1]-0.25) > 1e-15 {
		t.Fatalf("sum: %v", s.Y)
	}
	if _, err := EmbeddingSpectrumSeries("e", []float64{1}, "l1", 0); err == nil {
		t.Fatal("normalisation l1 accepted")
	}
	for mode, want := range map[string]string{"sum": "s_{i} / Σ_{j} s_{j}", "max": "s_{i} / s_{1}", "none": "s_{i}"} {
		if got := SpectrumYLabel(mode); got != want || !ValidSpectrumNorm(mode) {
			t.Errorf("%s: label %q", mode, got)
		}
	}
	if ValidSpectrumNorm("l1") {
		t.Error("l1 valid")
	}
}
