package tune

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// configField is one key of trainers.Config: its field index and type.
type configField struct {
	index int
	typ   reflect.Type
}

// configFields maps the yaml keys of trainers.Config (the flags of
// `dmlbench run`) to their fields.
var configFields = func() map[string]configField {
	t := reflect.TypeOf(trainers.Config{})
	m := map[string]configField{}
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			m[k] = configField{index: i, typ: t.Field(i).Type}
		}
	}
	return m
}()

// ConfigKeys are the keys of trainers.Config, sorted.
func ConfigKeys() []string {
	keys := make([]string, 0, len(configFields))
	for k := range configFields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var dasType = reflect.TypeOf((*regularizers.DASParams)(nil))

// nodeValue converts a YAML value of config key key to the Go value of its
// field, as strictly as `dmlbench run` parses the flag: an integer setting
// takes an integer (6 or 6.0, not 6.5), a number a finite number, a list a
// sequence (or the flag's comma-separated text).
func nodeValue(key string, n *yaml.Node) (any, error) {
	f := configFields[key]
	switch f.typ.Kind() {
	case reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			items := make([]string, len(n.Content))
			for i, c := range n.Content {
				if c.Kind != yaml.ScalarNode {
					return nil, fmt.Errorf("want a list of values")
				}
				items[i] = c.Value
			}
			return listValue(f.typ, items)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("want a mapping of name: number")
		}
		m := map[string]float64{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			x, err := finite(n.Content[i+1].Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", n.Content[i].Value, err)
			}
			m[n.Content[i].Value] = x
		}
		return m, nil
	}
	if n.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("want a single value")
	}
	if n.Tag == "!!null" {
		return nil, fmt.Errorf("no value")
	}
	return textValue(key, n.Value)
}

// textValue parses the text of a value of config key key (a categorical
// value of a search space, or a scalar of fixed:) as its flag does.
func textValue(key, s string) (any, error) {
	f, ok := configFields[key]
	if !ok {
		return nil, fmt.Errorf("%q is not a config key", key)
	}
	s = strings.TrimSpace(s)
	switch f.typ {
	case dasType:
		d, err := regularizers.ParseDASParams(s)
		if err != nil {
			return nil, err
		}
		return &d, nil
	}
	switch f.typ.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Int, reflect.Int64:
		n, err := integer(s)
		if err != nil {
			return nil, err
		}
		if f.typ.Kind() == reflect.Int {
			return int(n), nil
		}
		return n, nil
	case reflect.Float64:
		return finite(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	case reflect.Slice:
		var items []string
		if s != "" && s != "none" {
			items = strings.Split(s, ",")
		}
		return listValue(f.typ, items)
	}
	return nil, fmt.Errorf("%s cannot be set from %q", key, s)
}

// listValue is a []int or []string of items.
func listValue(t reflect.Type, items []string) (any, error) {
	if t.Elem().Kind() == reflect.String {
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
		n, err := integer(it)
		if err != nil {
			return nil, err
		}
		out = append(out, int(n))
	}
	return out, nil
}

// integer parses an integer written as one: 8, 08 and 8.0 are 8; 8.5 and
// 1e30 are errors.
func integer(s string) (int64, error) {
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

// finite parses a finite number.
func finite(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return x, nil
}

// setKey sets config key key of cfg to v, a value of nodeValue or
// textValue; the hyper map is merged into cfg's.
func setKey(cfg *trainers.Config, key string, v any) {
	if h, ok := v.(map[string]float64); ok && key == "hyper" {
		if cfg.Hyper == nil {
			cfg.Hyper = map[string]float64{}
		}
		for k, x := range h {
			cfg.Hyper[k] = x
		}
		return
	}
	f := reflect.ValueOf(cfg).Elem().Field(configFields[key].index)
	f.Set(reflect.ValueOf(v).Convert(f.Type()))
}

// Config is the trainer configuration of method m at point pt with seed:
// trainers.Defaults, then the spec's fixed keys, the method's, its loss and
// miner, then the point's values (config keys, or loss hyper-parameters).
// The values were parsed and checked when the spec was loaded.
func (s *Spec) Config(m Method, pt search.Point, seed int64) (trainers.Config, error) {
	if len(m.Command) > 0 {
		return s.commandConfig(seed), nil
	}
	cfg := trainers.Defaults()
	for _, fixed := range []map[string]any{s.Fixed, m.Fixed} {
		keys := make([]string, 0, len(fixed))
		for k := range fixed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			setKey(&cfg, k, fixed[k])
		}
	}
	cfg.Dataset, cfg.Loss, cfg.Seed = s.Dataset, m.Loss, seed
	if m.Miner != "" {
		cfg.Miner = m.Miner
	}
	for i, p := range m.Space {
		v, err := m.value(i, pt[i])
		if err != nil {
			return trainers.Config{}, fmt.Errorf("method %s: %s: %w", m.Name, p.Name, err)
		}
		if m.hyper[p.Name] {
			if cfg.Hyper == nil {
				cfg.Hyper = map[string]float64{}
			}
			cfg.Hyper[p.Name] = v.(float64)
		} else {
			setKey(&cfg, p.Name, v)
		}
	}
	return cfg, nil
}

// value is the Go value of parameter i of m's space at coordinate x: the
// parsed categorical value, an integer, or the number.
func (m Method) value(i int, x float64) (any, error) {
	p := m.Space[i]
	if p.Categorical() {
		j := int(x)
		if j < 0 || j >= len(p.Values) {
			return nil, fmt.Errorf("index %v outside the %d values", x, len(p.Values))
		}
		if m.hyper[p.Name] {
			return finite(p.Values[j])
		}
		return textValue(p.Name, p.Values[j])
	}
	if m.hyper[p.Name] {
		return x, nil
	}
	switch configFields[p.Name].typ.Kind() {
	case reflect.Int:
		return int(x), nil
	case reflect.Int64:
		return int64(x), nil
	}
	return x, nil
}
