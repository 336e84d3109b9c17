package tune

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dmlbench/dmlbench/experiments/tune/search"
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

// ParsePoint reads back the values of a trial record (cell.json params)
// as a point of space.
func ParsePoint(space search.Space, values map[string]string) (search.Point, error) {
	pt := make(search.Point, len(space))
	for i, p := range space {
		v, ok := values[p.Name]
		if !ok {
			return nil, fmt.Errorf("no value for %s", p.Name)
		}
		if p.Categorical() {
			idx := slices.Index(p.Values, v)
			if idx < 0 {
				return nil, fmt.Errorf("%s = %q is not among %v", p.Name, v, p.Values)
			}
			pt[i] = float64(idx)
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s = %q: %w", p.Name, v, err)
		}
		pt[i] = x
	}
	return pt, nil
}
