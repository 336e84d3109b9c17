package clustering

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// faissGolden is testdata/faiss_kmeans_golden.json, written by
// testdata/faiss_kmeans_gen.py from Debian's python3-faiss 1.7.3.
type faissGolden struct {
	Faiss string       `json:"faiss"`
	Scale float64      `json:"scale"`
	Cases []goldenCase `json:"cases"`
}

// goldenCase is one faiss run of a golden file.
type goldenCase struct {
	Name        string    `json:"name"`
	Rows        int       `json:"rows"`
	Cols        int       `json:"cols"`
	K           int       `json:"k"`
	Preset      string    `json:"preset"`
	TrainPoints int       `json:"train_points"`
	InitRows    []int32   `json:"init_rows"`
	Splits      int       `json:"splits"`
	Objective   []float64 `json:"objective"`
	Assign      []int32   `json:"assign"`
	Labels      []int32   `json:"labels"`
	NMI         float64   `json:"nmi"`
}

// readGolden reads testdata/name, a faissGolden file.
func readGolden(t *testing.T, name string) faissGolden {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var g faissGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// readI16 reads rows×cols little-endian int16 counts of 1/scale.
func readI16(t *testing.T, path string, rows, cols int, scale float64) mat32.Matrix {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 2*rows*cols {
		t.Fatalf("%s: %d bytes, want %d", path, len(b), 2*rows*cols)
	}
	x := mat32.Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
	for i := range x.Data {
		x.Data[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / float32(scale)
	}
	return x
}

// goldenNMI is the arithmetic-mean normalised mutual information of two
// labelings (the generator's definition, scikit-learn's default).
func goldenNMI(a, b []int32) float64 {
	n := float64(len(a))
	joint := map[[2]int32]float64{}
	pa, pb := map[int32]float64{}, map[int32]float64{}
	for i := range a {
		joint[[2]int32{a[i], b[i]}]++
		pa[a[i]]++
		pb[b[i]]++
	}
	var mi, ha, hb float64
	for k, c := range joint {
		mi += c / n * math.Log(c*n/(pa[k[0]]*pb[k[1]]))
	}
	for _, c := range pa {
		ha -= c / n * math.Log(c/n)
	}
	for _, c := range pb {
		hb -= c / n * math.Log(c/n)
	}
	if ha == 0 && hb == 0 {
		return 1
	}
	return mi / ((ha + hb) / 2)
}

// TestKMeansFaissGolden pins KMeans to faiss 1.7.3's own k-means on the
// committed cases (a 3000 × 64 60-class embedding, noisy classes, a
// subsampling pml run, duplicated rows with empty-cluster splits): the same
// initial centroid rows, ≥ 99.9 % identical final assignments (faiss's BLAS
// distances may flip a near-tie) and NMI within 1e-3.
func TestKMeansFaissGolden(t *testing.T) {
	g := readGolden(t, "faiss_kmeans_golden.json")
	if len(g.Cases) < 4 {
		t.Fatalf("golden has %d cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			x := readI16(t, filepath.Join("testdata", "faiss_kmeans", c.Name+".i16"), c.Rows, c.Cols, g.Scale)
			opt, err := KMeansPreset(c.Preset)
			if err != nil {
				t.Fatal(err)
			}
			// Initial centroid rows, through the subsample when there is one.
			rows := make([]int32, c.Rows)
			for i := range rows {
				rows[i] = int32(i)
			}
			if opt.MaxPointsPerCentroid > 0 && c.Rows > c.K*opt.MaxPointsPerCentroid {
				rows = faissRandPerm(c.Rows, opt.Seed)[:c.K*opt.MaxPointsPerCentroid]
			}
			var init []int32
			for _, p := range initPerm(len(rows), c.K, opt.Seed) {
				init = append(init, rows[p])
			}
			if !reflect.DeepEqual(init, c.InitRows) {
				t.Fatalf("initial rows %v, faiss %v", init, c.InitRows)
			}
			// KMeans with no iteration keeps exactly those centroids.
			o0 := opt
			o0.NIter = 0
			r0, err := KMeans(context.Background(), x, c.K, o0)
			if err != nil {
				t.Fatal(err)
			}
			for j, p := range c.InitRows {
				if !reflect.DeepEqual(r0.Centroids.Row(j), x.Row(int(p))) {
					t.Fatalf("initial centroid %d is not row %d", j, p)
				}
			}

			res, err := KMeans(context.Background(), x, c.K, opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.TrainPoints != c.TrainPoints {
				t.Fatalf("train points %d, faiss %d", res.TrainPoints, c.TrainPoints)
			}
			if res.Splits != c.Splits {
				t.Fatalf("splits %d, faiss %d", res.Splits, c.Splits)
			}
			// faiss's objective sums its BLAS distances, KMeans its kernel's
			// (the same expansion, other rounding): equal up to float32
			// rounding while the trajectories agree.
			if len(res.History) != len(c.Objective) {
				t.Fatalf("%d objective values, faiss %d", len(res.History), len(c.Objective))
			}
			var maxRel float64
			for i, o := range c.Objective {
				maxRel = math.Max(maxRel, math.Abs(res.History[i]-o)/o)
				if math.Abs(res.History[i]-o) > 1e-5*o {
					t.Errorf("iteration %d: objective %.8g, faiss %.8g", i, res.History[i], o)
				}
			}
			same := 0
			for i, a := range res.Assign {
				if a == c.Assign[i] {
					same++
				}
			}
			frac := float64(same) / float64(c.Rows)
			nmi := goldenNMI(c.Labels, res.Assign)
			t.Logf("identical assignments %.4f%%, NMI %.6f (faiss %.6f), splits %d (faiss %d), objective within %.1e", 100*frac, nmi, c.NMI, res.Splits, c.Splits, maxRel)
			if frac < 0.999 {
				t.Errorf("only %d of %d assignments equal faiss's", same, c.Rows)
			}
			if math.Abs(nmi-c.NMI) > 1e-3 {
				t.Errorf("NMI %.6f, faiss %.6f", nmi, c.NMI)
			}
			if fn := goldenNMI(c.Labels, c.Assign); math.Abs(fn-c.NMI) > 1e-12 {
				t.Errorf("NMI of faiss's assignment %.15f, golden says %.15f", fn, c.NMI)
			}
		})
	}
}
