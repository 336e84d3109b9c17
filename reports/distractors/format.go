package distractors

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/reports"
)

// WriteJSON writes c as indented JSON.
func WriteJSON(w io.Writer, c *Curve) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadJSON reads a curve written by WriteJSON.
func ReadJSON(r io.Reader) (*Curve, error) {
	var c Curve
	if err := json.NewDecoder(r).Decode(&c); err != nil {
		return nil, fmt.Errorf("not a distractor curve (eval --gallery-sizes --format json): %v", err)
	}
	if len(c.Points) == 0 || len(c.Keys) == 0 {
		return nil, fmt.Errorf("a distractor curve without points")
	}
	return &c, nil
}

// WriteTable writes one row per gallery size: each metric with its
// interval, fractions in percent.
func WriteTable(w io.Writer, c *Curve) error {
	head := []string{"gallery", "distractors"}
	head = append(head, c.Keys...)
	rows := [][]string{head}
	for _, p := range c.Points {
		row := []string{strconv.Itoa(p.Size), strconv.Itoa(p.Distractors)}
		for _, k := range c.Keys {
			_, ci := p.Lo[k]
			row = append(row, cell(k, p.Metrics[k], p.Lo[k], p.Hi[k], ci))
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(head))
	for _, r := range rows {
		for i, s := range r {
			widths[i] = max(widths[i], len([]rune(s)))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, s := range r {
			fmt.Fprintf(&b, "%*s  ", widths[i], s)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d queries; %d relevant gallery items always kept, %d distractors subsampled (nested, seed %d); [%g%% class-bootstrap interval, %d resamples]; metrics in %%\n",
		c.Queries, c.Relevant, c.Distractors, c.Seed, 100*c.Level, c.Resamples)
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(key string, v, lo, hi float64, ci bool) string {
	f := func(x float64) string {
		if math.IsNaN(x) {
			return "n/a"
		}
		if reports.IsPercentMetric(key) {
			x *= 100
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	if !ci {
		return f(v)
	}
	return f(v) + " [" + f(lo) + ", " + f(hi) + "]"
}
