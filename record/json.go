package record

import (
	"encoding/json"
	"io"
	"math"
)

// JSON policy. JSON has no NaN or ±Inf, yet a metric can be undefined (a
// class-free split, an empty average): every metric map of dmlbench is a
// Metrics, which writes a non-finite value as null and reads null back as
// NaN, so stdout (`eval --format json`), `eval --out` and run.json agree and
// a missing value is never read as 0.

// MarshalJSON writes the map with sorted keys; NaN and ±Inf become null.
func (m Metrics) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
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
	return json.Marshal(out)
}

// UnmarshalJSON reads null values as NaN.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var in map[string]*float64
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in == nil {
		*m = nil
		return nil
	}
	out := make(Metrics, len(in))
	for k, v := range in {
		if v == nil {
			out[k] = math.NaN()
		} else {
			out[k] = *v
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
