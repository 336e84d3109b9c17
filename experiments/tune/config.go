package tune

import (
	"fmt"
	"reflect"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/trainers"
)

// configFields maps the keys of trainers.Config (trainers.Settings: the
// flags of `dmlbench run`) to their settings.
var configFields = func() map[string]trainers.Setting {
	m := map[string]trainers.Setting{}
	for _, s := range trainers.Settings() {
		m[s.Key] = s
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

// nodeValue converts a YAML value of config key key to the Go value of its
// field, as strictly as `dmlbench run` parses the flag: an integer setting
// takes an integer (6 or 6.0, not 6.5), a number a finite number, a list a
// sequence (or the flag's comma-separated text).
func nodeValue(key string, n *yaml.Node) (any, error) {
	f := configFields[key]
	switch f.Type.Kind() {
	case reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			items := make([]string, len(n.Content))
			for i, c := range n.Content {
				if c.Kind != yaml.ScalarNode {
					return nil, fmt.Errorf("want a list of values")
				}
				items[i] = c.Value
			}
			return f.ParseList(items)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("want a mapping of name: number")
		}
		m := map[string]float64{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			x, err := trainers.ParseFinite(n.Content[i+1].Value)
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
// value of a search space, or a scalar of fixed:) as its flag does
// (trainers.Setting.Parse).
func textValue(key, s string) (any, error) {
	f, ok := configFields[key]
	if !ok {
		return nil, fmt.Errorf("%q is not a config key", key)
	}
	return f.Parse(s)
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
	f := reflect.ValueOf(cfg).Elem().Field(configFields[key].Index)
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
			return trainers.ParseFinite(p.Values[j])
		}
		return textValue(p.Name, p.Values[j])
	}
	if m.hyper[p.Name] {
		return x, nil
	}
	switch configFields[p.Name].Type.Kind() {
	case reflect.Int:
		return int(x), nil
	case reflect.Int64:
		return int64(x), nil
	}
	return x, nil
}
