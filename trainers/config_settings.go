package trainers

import (
	"reflect"
	"strings"
)

// Setting is one setting of a settings struct (Config, or a nested one
// such as regularizers.DASParams), read from its field's tags once for
// every reader: the command line's flags (cmd/dmlbench), --config files
// (LoadConfigFile) and tuning specs (experiments/tune).
type Setting struct {
	// Key is the setting's key in YAML, JSON and run.json (the `yaml` tag;
	// the `json` tag holds the same key).
	Key string
	// Flag is its flag of `dmlbench run`: the `flag` tag, else Key
	// (convention is --compat).
	Flag string
	// Usage is the flag's help (the `usage` tag).
	Usage string
	// Index is the field's index in the struct, Type its type.
	Index int
	Type  reflect.Type
}

// Settings are Config's settings, in field order.
func Settings() []Setting { return SettingsOf(reflect.TypeFor[Config]()) }

// SettingsOf are the settings of struct type t, in field order: every
// field with a `yaml` key ("-" and untagged fields are not settings).
func SettingsOf(t reflect.Type) []Setting {
	var out []Setting
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		flag := key
		if fl := f.Tag.Get("flag"); fl != "" {
			flag = fl
		}
		out = append(out, Setting{Key: key, Flag: flag, Usage: f.Tag.Get("usage"), Index: i, Type: f.Type})
	}
	return out
}
