package tune

import (
	"encoding/json"
	"math"
)

// Value is a score in tune.json: a finite number, or null for NaN (a
// failed trial, or none finished yet), which JSON numbers cannot hold.
type Value float64

// MarshalJSON writes NaN and ±Inf as null.
func (v Value) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null as NaN.
func (v *Value) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = Value(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*v = Value(f)
	return nil
}
