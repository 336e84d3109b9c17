package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/metrics"
)

// The file's columns read back to the same float64s, whose means (as
// metrics.Mean takes them) are the printed metrics bit for bit; JSON lines
// hold the same values, null where a query does not count.
func TestValuesFileRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2, 2))
	m, y, _ := embed(r, r, 30, 4, 5, 1.0)
	y[0] = 99 // a lone query: no MAP@R value
	res := evalPQ(t, m, y)
	var buf bytes.Buffer
	if err := WriteCSV(&buf, res.PerQuery); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "index,label,R@1,MAP@R" {
		t.Fatalf("header %q", got)
	}
	if recs[1][1] != "99" || recs[1][3] != "" {
		t.Errorf("lone query row %v: label 99, empty MAP@R expected", recs[1])
	}
	index := make([]int, len(recs)-1)
	for j, key := range recs[0][2:] {
		vals := make([]float64, len(recs)-1)
		for i, rec := range recs[1:] {
			index[i], _ = strconv.Atoi(rec[0])
			vals[i] = math.NaN()
			if rec[2+j] != "" {
				if vals[i], err = strconv.ParseFloat(rec[2+j], 64); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got, want := metrics.Mean(index, vals), res.Metrics[key]; math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%s: file mean %v, metric %v", key, got, want)
		}
	}
	buf.Reset()
	if err := WriteJSONL(&buf, res.PerQuery); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(recs)-1 || first["label"] != "99" || first["MAP@R"] != nil || first["index"] != 0.0 {
		t.Errorf("%d lines, first %v", len(lines), first)
	}
}
