package tune

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// textValue parses a value of a config key as `dmlbench run` parses its
// flag: integers as integers, finite numbers, booleans, lists.
func TestTextValue(t *testing.T) {
	for _, c := range []struct {
		key, text string
		want      any
		err       string
	}{
		{"epochs", "8", 8, ""},
		{"epochs", "08", 8, ""},
		{"epochs", "8.0", 8, ""},
		{"epochs", "8.5", nil, `"8.5" is not an integer`},
		{"epochs", "1e30", nil, "is not an integer"},
		{"epochs", "eight", nil, "is not an integer"},
		{"data-seed", "-3", int64(-3), ""},
		{"lr", "1e-3", 1e-3, ""},
		{"lr", "NaN", nil, "is not a finite number"},
		{"lr", "+Inf", nil, "is not a finite number"},
		{"das", "true", true, ""},
		{"das", "yes please", nil, "is not true or false"},
		{"miner", " distance ", "distance", ""},
		{"hidden", "512,256", []int{512, 256}, ""},
		{"hidden", "none", []int{}, ""},
		{"hidden", "512,x", nil, `"x" is not a positive integer`},
		{"hidden", "512,0", nil, `"0" is not a positive integer`},
		{"metrics", "R@1, MAP@R", []string{"R@1", "MAP@R"}, ""},
		{"nosuchkey", "1", nil, "is not a config key"},
	} {
		got, err := textValue(c.key, c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s=%q: error %v, want %q", c.key, c.text, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s=%q: %#v, %v; want %#v", c.key, c.text, got, err, c.want)
		}
	}
	d, err := textValue("das-params", "3,4,10,0.01,0.01")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := d.(*regularizers.DASParams); !ok || *p != regularizers.DefaultDASParams() {
		t.Fatalf("das-params %#v", d)
	}
}

// nodeValue reads YAML values of fixed: with the same rules, and refuses
// structure where a value is due.
func TestNodeValue(t *testing.T) {
	node := func(src string) *yaml.Node {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		return n.Content[0]
	}
	for _, c := range []struct {
		key, src string
		want     any
		err      string
	}{
		{"hidden", "[32, 16]", []int{32, 16}, ""},
		{"hidden", "[32, [16]]", nil, "want a list of values"},
		{"hidden", "[]", []int{}, ""},
		{"hyper", "{margin: 0.2, beta: 1}", map[string]float64{"margin": 0.2, "beta": 1}, ""},
		{"hyper", "{margin: .nan}", nil, "margin: "},
		{"hyper", "[1]", nil, "want a mapping"},
		{"epochs", "{a: 1}", nil, "want a single value"},
		{"epochs", "~", nil, "no value"},
		{"epochs", "6", 6, ""},
		{"lr", "0.001", 0.001, ""},
	} {
		got, err := nodeValue(c.key, node(c.src))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %s: error %v, want %q", c.key, c.src, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %s: %#v, %v; want %#v", c.key, c.src, got, err, c.want)
		}
	}
}

// setKey merges hyper maps and sets every other key's field.
func TestSetKey(t *testing.T) {
	cfg := trainers.Defaults()
	setKey(&cfg, "hyper", map[string]float64{"margin": 0.2})
	setKey(&cfg, "hyper", map[string]float64{"beta": 1.2})
	setKey(&cfg, "batch-size", 64)
	setKey(&cfg, "data-seed", int64(9))
	setKey(&cfg, "hidden", []int{})
	if cfg.Hyper["margin"] != 0.2 || cfg.Hyper["beta"] != 1.2 || cfg.BatchSize != 64 || cfg.DataSeed != 9 || cfg.Hidden == nil || len(cfg.Hidden) != 0 {
		t.Fatalf("config %+v", cfg)
	}
	if keys := ConfigKeys(); len(keys) < 30 || keys[0] > keys[1] {
		t.Fatalf("config keys %v", keys)
	}
}

// Integer, categorical and hyper-parameter points become their settings.
func TestMethodValue(t *testing.T) {
	m := Method{Space: search.Space{
		{Name: "alpha", Values: []string{"1", "2.5"}},
		{Name: "embed-dim", Low: 8, High: 64, Int: true},
		{Name: "miner", Values: []string{"distance", "semihard"}},
		{Name: "lr", Low: 1e-4, High: 1e-2},
	}, hyper: map[string]bool{"alpha": true}}
	for i, c := range []struct {
		x    float64
		want any
	}{{1, 2.5}, {32, 32}, {1, "semihard"}, {0.003, 0.003}} {
		got, err := m.value(i, c.x)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("parameter %d at %v: %#v, %v; want %#v", i, c.x, got, err, c.want)
		}
	}
	if _, err := m.value(0, 5); err == nil {
		t.Error("categorical index 5 of 2: no error")
	}
}
