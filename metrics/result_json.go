package metrics

import (
	"encoding/json"
	"math"
)

// MarshalJSON writes Result with every NaN or ±Inf metric (a mean over no
// query, a rank-deficient ρ) as null, which JSON can represent, so that
// stdout and --out files carry the same document.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		*plain
		Metrics map[string]*float64 `json:"metrics"`
		Extra   map[string]*float64 `json:"extra,omitempty"`
	}{(*plain)(r), nullable(r.Metrics), nullable(r.Extra)})
}

func nullable(m map[string]float64) map[string]*float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]*float64, len(m))
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			out[k] = nil
			continue
		}
		v := v
		out[k] = &v
	}
	return out
}
