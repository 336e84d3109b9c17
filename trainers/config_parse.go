package trainers

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

var dasParamsType = reflect.TypeFor[*regularizers.DASParams]()

// Parse is the value of setting s written as text, the one parser of a
// setting's text for the command line's flags and tuning specs: a string
// as written (trimmed); an integer written as one (ParseInteger); a finite
// number; true or false; a list as comma-separated items ("" and "none"
// are the empty list; ParseList); a map as name=number pairs
// ("margin=0.2,beta=1.2"); das-params as regularizers.ParseDASParams.
func (s Setting) Parse(text string) (any, error) {
	text = strings.TrimSpace(text)
	if s.Type == dasParamsType {
		d, err := regularizers.ParseDASParams(text)
		if err != nil {
			return nil, err
		}
		return &d, nil
	}
	switch s.Type.Kind() {
	case reflect.String:
		return text, nil
	case reflect.Int, reflect.Int64:
		n, err := ParseInteger(text)
		if err != nil {
			return nil, err
		}
		if s.Type.Kind() == reflect.Int {
			return int(n), nil
		}
		return n, nil
	case reflect.Float64:
		return ParseFinite(text)
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", text)
		}
		return b, nil
	case reflect.Slice:
		var items []string
		if text != "" && text != "none" {
			items = strings.Split(text, ",")
		}
		return s.ParseList(items)
	case reflect.Map:
		m := map[string]float64{}
		for _, kv := range strings.Split(text, ",") {
			if kv = strings.TrimSpace(kv); kv == "" {
				continue
			}
			k, val, ok := strings.Cut(kv, "=")
			x, err := ParseFinite(val)
			if !ok || err != nil {
				return nil, fmt.Errorf("%q is not name=number", kv)
			}
			m[strings.TrimSpace(k)] = x
		}
		return m, nil
	}
	return nil, fmt.Errorf("%s cannot be set from %q", s.Key, text)
}

// ParseList is the value of list setting s from its items (a YAML
// sequence, or the comma-separated text): strings trimmed, empty ones
// dropped; integers positive (the widths and steps lists hold).
func (s Setting) ParseList(items []string) (any, error) {
	if s.Type.Elem().Kind() == reflect.String {
		out := make([]string, 0, len(items))
		for _, it := range items {
			if it = strings.TrimSpace(it); it != "" {
				out = append(out, it)
			}
		}
		return out, nil
	}
	out := make([]int, 0, len(items))
	for _, it := range items {
		n, err := ParseInteger(it)
		if err != nil || n <= 0 || n > math.MaxInt32 {
			return nil, fmt.Errorf("%q is not a positive integer", strings.TrimSpace(it))
		}
		out = append(out, int(n))
	}
	return out, nil
}

// ParseInteger parses an integer written as one: 8, 08 and 8.0 are 8; 8.5
// and 1e30 are errors.
func ParseInteger(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return int64(x), nil
}

// ParseFinite parses a finite number.
func ParseFinite(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a finite number", strings.TrimSpace(s))
	}
	return x, nil
}
