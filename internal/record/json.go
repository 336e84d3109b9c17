package record

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// JSON policy. JSON has no NaN or ±Inf, yet a metric can be undefined (a
// class-free split, an empty average: NaN) or infinite (ρ of a
// rank-deficient embedding). Every metric map of dmlbench is a Metrics,
// which writes NaN as null and ±Inf as the strings "+Inf" and "-Inf", and
// reads them back the same way, so stdout (`eval --format json`), `eval
// --out` and run.json agree, a missing value is never read as 0 and an
// infinite one is never read as missing.

// MarshalJSON writes the map with sorted keys; NaN becomes null and ±Inf
// the strings "+Inf" / "-Inf".
func (m Metrics) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case math.IsNaN(v):
			out[k] = nil
		case math.IsInf(v, 1):
			out[k] = "+Inf"
		case math.IsInf(v, -1):
			out[k] = "-Inf"
		default:
			out[k] = v
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads null as NaN and "+Inf" / "-Inf" as ±Inf.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in == nil {
		*m = nil
		return nil
	}
	out := make(Metrics, len(in))
	for k, raw := range in {
		switch string(raw) {
		case "null":
			out[k] = math.NaN()
		case `"+Inf"`, `"Inf"`:
			out[k] = math.Inf(1)
		case `"-Inf"`:
			out[k] = math.Inf(-1)
		default:
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("metric %q: %s is not a number, null, \"+Inf\" or \"-Inf\"", k, raw)
			}
			out[k] = v
		}
	}
	*m = out
	return nil
}

// MarshalJSON is the one JSON encoding of dmlbench's outputs: indented by
// two spaces, HTML characters left as they are, a final newline.
func MarshalJSON(v any) ([]byte, error) {
	var b jsonBuffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b, nil
}

// EncodeJSON writes v to w as MarshalJSON does.
func EncodeJSON(w io.Writer, v any) error {
	b, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

type jsonBuffer []byte

func (b *jsonBuffer) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// epochJSON is Epoch as written: its loss a pointer, so that an unknown
// or non-finite loss (NaN, ±Inf: a trainer that diverged, or wrote no
// loss) is null, never a number it was not.
type epochJSON struct {
	Epoch     int      `json:"epoch"`
	Loss      *float64 `json:"loss"`
	Seconds   float64  `json:"seconds"`
	Metrics   Metrics  `json:"metrics,omitempty"`
	ValMetric Metrics  `json:"val_metrics,omitempty"`
}

// MarshalJSON writes a NaN or ±Inf loss as null.
func (e Epoch) MarshalJSON() ([]byte, error) {
	j := epochJSON{Epoch: e.Epoch, Seconds: e.Seconds, Metrics: e.Metrics, ValMetric: e.ValMetric}
	if !math.IsNaN(e.Loss) && !math.IsInf(e.Loss, 0) {
		j.Loss = &e.Loss
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a null loss as NaN.
func (e *Epoch) UnmarshalJSON(b []byte) error {
	var j epochJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Epoch{Epoch: j.Epoch, Loss: math.NaN(), Seconds: j.Seconds, Metrics: j.Metrics, ValMetric: j.ValMetric}
	if j.Loss != nil {
		e.Loss = *j.Loss
	}
	return nil
}
