package metrics

import "github.com/dmlbench/dmlbench/internal/mat32"

// Queries inside the reference (Input.QueryRows; pytorch-metric-learning's
// ref_includes_query with a query subset): the search is leave-one-out
// over every row, self excluded by index, and only the listed rows are
// scored.

// queryRowMask validates Input.QueryRows against n rows.
func queryRowMask(rows []int, n int) ([]bool, error) {
	if len(rows) == 0 {
		return nil, inputErr("query rows: the list is empty")
	}
	mask := make([]bool, n)
	for i, r := range rows {
		if r < 0 || r >= n {
			return nil, inputErr("query rows: entry %d is row %d, outside 0..%d", i, r, n-1)
		}
		if mask[r] {
			return nil, inputErr("query rows: row %d is listed twice (entry %d)", r, i)
		}
		mask[r] = true
	}
	return mask, nil
}

// subsetRows returns the given rows of m and of labels, in list order.
func subsetRows(m mat32.Matrix, labels []int32, rows []int) (mat32.Matrix, []int32) {
	out := mat32.Matrix{Rows: len(rows), Cols: m.Cols, Data: make([]float32, 0, len(rows)*m.Cols)}
	lab := make([]int32, len(rows))
	for i, r := range rows {
		out.Data = append(out.Data, m.Row(r)...)
		lab[i] = labels[r]
	}
	return out, lab
}
