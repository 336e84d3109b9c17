package distractors

import (
	"math"

	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/plots"
)

// Series are the curves of keys (all of c's when nil) against gallery
// size, fractions in percent. The error bars cover each point's interval:
// their half-width is the larger of its two sides (plots draws symmetric
// bars).
func Series(c *Curve, keys []string) []plots.Series {
	if keys == nil {
		keys = c.Keys
	}
	var out []plots.Series
	for _, k := range keys {
		s := plots.Series{Label: k}
		scale := 1.0
		if reports.IsPercentMetric(k) {
			scale = 100
		}
		for _, p := range c.Points {
			v, ok := p.Metrics[k]
			if !ok || math.IsNaN(v) {
				continue
			}
			s.X = append(s.X, float64(p.Size))
			s.Y = append(s.Y, scale*v)
			e := 0.0
			if lo, ok := p.Lo[k]; ok {
				e = scale * max(v-lo, p.Hi[k]-v)
			}
			s.YErr = append(s.YErr, e)
		}
		out = append(out, s)
	}
	return out
}
