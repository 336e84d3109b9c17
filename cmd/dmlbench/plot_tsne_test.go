package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

func TestPlotTSNECommand(t *testing.T) {
	dir := t.TempDir()
	emb, lab := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	rng := rand.New(rand.NewSource(1))
	const classes, per, d = 6, 15, 8
	x := mat32.Matrix{Rows: classes * per, Cols: d, Data: make([]float32, classes*per*d)}
	var labels []int32
	for i := 0; i < x.Rows; i++ {
		c := i / per
		for t := 0; t < d; t++ {
			x.Data[i*d+t] = float32(rng.NormFloat64())
		}
		x.Data[i*d+c] += 10
		labels = append(labels, int32(100+c))
	}
	if err := arrays.SaveNPY(emb, x); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, labels); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"png", "svg", "pdf"} {
		out := filepath.Join(dir, "tsne."+ext)
		_, errs, code := runCLI(t, "plot", "tsne", "--emb", emb, "--labels", lab, "--classes", "4", "--max-points", "50",
			"--perplexity", "10", "--iters", "300", "--out", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, errs)
		}
		if st, err := os.Stat(out); err != nil || st.Size() < 500 {
			t.Fatalf("%s: %v", out, err)
		}
		if !strings.Contains(errs, "50 points, 4 classes") {
			t.Fatalf("summary line missing: %s", errs)
		}
	}
	for _, bad := range [][]string{
		{"--labels", lab, "--out", filepath.Join(dir, "a.png")},
		{"--emb", emb, "--labels", lab},
		{"--emb", emb, "--labels", lab, "--out", filepath.Join(dir, "a.png"), "--classes", "1", "--max-points", "10"}, // perplexity 30 > 9 points
		{"--emb", emb, "--labels", lab, "--out", filepath.Join(dir, "a.gif")},
		{"--emb", emb, "--labels", lab, "--out", filepath.Join(dir, "a.png"), "--iters", "0"},
	} {
		if _, _, code := runCLI(t, append([]string{"plot", "tsne", "-q"}, bad...)...); code == 0 {
			t.Errorf("accepted %v", bad)
		}
	}
	out, _, _ := runCLI(t, "plot", "tsne", "--help")
	if !strings.Contains(out, "--max-points") || !strings.Contains(out, "Examples") {
		t.Fatalf("help:\n%s", out)
	}
}

// --out may name a directory.
func TestTSNEDirectoryOut(t *testing.T) {
	dir := t.TempDir()
	emb, lab := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	x := mat32.Matrix{Rows: 40, Cols: 4, Data: make([]float32, 160)}
	var labels []int32
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < x.Rows; i++ {
		for d := 0; d < 4; d++ {
			x.Data[i*4+d] = float32(rng.NormFloat64()) + float32(10*(i%4)*d)
		}
		labels = append(labels, int32(i%4))
	}
	if err := arrays.SaveNPY(emb, x); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, labels); err != nil {
		t.Fatal(err)
	}
	figs := filepath.Join(dir, "figs") + "/"
	if _, errs, code := runCLI(t, "plot", "tsne", "-q", "--emb", emb, "--labels", lab, "--perplexity", "5", "--iters", "250", "--out", figs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(figs, "tsne.png")); err != nil {
		t.Fatal(err)
	}
}
