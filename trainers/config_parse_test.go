package trainers

import (
	"reflect"
	"testing"
)

// TestSettingParse: the one parser of a setting's text, as the flags and
// tuning specs write values.
func TestSettingParse(t *testing.T) {
	byKey := map[string]Setting{}
	for _, s := range Settings() {
		byKey[s.Key] = s
	}
	for _, c := range []struct {
		key, text string
		want      any
	}{
		{"loss", " margin ", "margin"},
		{"epochs", "6.0", 6},
		{"seed", "-0", int64(0)},
		{"lr", "1e-3", 1e-3},
		{"save-embeddings", "true", true},
		{"hidden", "512, 256", []int{512, 256}},
		{"hidden", "none", []int{}},
		{"metrics", "R@1,,MAP@R", []string{"R@1", "MAP@R"}},
		{"hyper", "margin=0.2, beta=1.2", map[string]float64{"margin": 0.2, "beta": 1.2}},
	} {
		got, err := byKey[c.key].Parse(c.text)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q: %#v, %v; want %#v", c.key, c.text, got, err, c.want)
		}
	}
	for _, c := range []struct{ key, text, want string }{
		{"epochs", "6.5", `"6.5" is not an integer`},
		{"lr", "NaN", `"NaN" is not a finite number`},
		{"hidden", "512,0", `"0" is not a positive integer`},
		{"hyper", "margin", `"margin" is not name=number`},
		{"save-embeddings", "yes", `"yes" is not true or false`},
	} {
		if _, err := byKey[c.key].Parse(c.text); err == nil || err.Error() != c.want {
			t.Errorf("%s %q: %v; want %s", c.key, c.text, err, c.want)
		}
	}
	if flag := byKey["convention"].Flag; flag != "compat" {
		t.Errorf("convention's flag %q, want compat", flag)
	}
}
