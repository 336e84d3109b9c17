package compare

import (
	"bufio"

	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/csvsafe"
	"github.com/dmlbench/dmlbench/metrics"
)

// WriteValuesFile writes the per-query values to path atomically: JSON
// lines when path ends in .jsonl, CSV otherwise. Each row holds the
// query's index, its label and one value per metric, written so that it
// reads back to the same float64 (shortest round-trip form); a query that
// does not count for a metric has an empty cell (CSV) or null (JSON).
func WriteValuesFile(path string, v *metrics.QueryValues) error {
	write := WriteCSV
	if strings.HasSuffix(strings.ToLower(path), ".jsonl") {
		write = WriteJSONL
	}
	return atomicfile.WriteFile(path, func(w io.Writer) error { return write(w, v) })
}

// WriteCSV writes the values as CSV with a header row: index, label, then
// the metric keys. A label a spreadsheet would run as a formula gets a
// leading "'" (internal/csvsafe, docs/output.md).
func WriteCSV(w io.Writer, v *metrics.QueryValues) error {
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(append([]string{"index", "label"}, v.Keys...)); err != nil {
		return err
	}
	row := make([]string, 2+len(v.Keys))
	for i := range v.Index {
		row[0], row[1] = strconv.Itoa(v.Index[i]), v.Labels[i]
		for j := range v.Keys {
			row[2+j] = formatValue(v.Values[j][i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSONL writes one JSON object per query: {"index", "label", key: value…}.
func WriteJSONL(w io.Writer, v *metrics.QueryValues) error {
	bw := bufio.NewWriter(w)
	for i := range v.Index {
		label, err := json.Marshal(v.Labels[i])
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, `{"index":%d,"label":%s`, v.Index[i], label)
		for j, k := range v.Keys {
			key, _ := json.Marshal(k)
			val := formatValue(v.Values[j][i])
			if val == "" {
				val = "null"
			}
			fmt.Fprintf(bw, ",%s:%s", key, val)
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}

// formatValue is the shortest decimal that parses back to x; "" for NaN.
func formatValue(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
