package metrics

import (
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/usage"
)

// kmeans is the backend's own (nil); another algorithm partitions every
// row, DBSCAN's noise as singletons; a misspelt name is a usage error
// naming the nearest algorithm.
func TestClusterFunc(t *testing.T) {
	if f, err := ClusterFunc("KMeans", 1, 0, 0, nil); f != nil || err != nil {
		t.Fatalf("kmeans: %v", err)
	}
	if _, err := ClusterFunc("dbscn", 1, 0, 0, nil); !usage.Is(err) || !strings.Contains(err.Error(), "dbscan") {
		t.Fatalf("dbscn: %v", err)
	}
	f, err := ClusterFunc("dbscan", 1, 0.5, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := mat32.Matrix{Rows: 5, Cols: 1, Data: []float32{0, 0.1, 0.2, 10, 50}}
	labels, err := f(x, 2, 1)
	if err != nil || len(labels) != 5 || labels[0] != labels[2] || labels[3] == labels[4] || labels[3] == labels[0] {
		t.Fatalf("labels %v, %v", labels, err)
	}
}
