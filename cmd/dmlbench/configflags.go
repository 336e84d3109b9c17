package main

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/trainers"
)

// configField is a setting's flag name and help.
type configField struct{ name, usage string }

// configFlags declares one urfave/cli flag per setting of the struct that
// defaults points to (trainers.SettingsOf), with the field's value there as
// the flag's default: a setting is declared once, in the struct, and the
// default the help shows is the one a run gets. Lists, maps and parameter
// sets are string flags parsed by setConfigField.
func configFlags(defaults any) []cli.Flag {
	v := reflect.ValueOf(defaults).Elem()
	var flags []cli.Flag
	for _, s := range trainers.SettingsOf(v.Type()) {
		f := configField{name: s.Flag, usage: s.Usage}
		fv := v.Field(s.Index)
		switch fv.Interface().(type) {
		case string:
			flags = append(flags, &cli.StringFlag{Name: f.name, Value: fv.String(), Usage: f.usage})
		case int:
			flags = append(flags, &cli.IntFlag{Name: f.name, Value: int(fv.Int()), Usage: f.usage})
		case int64:
			flags = append(flags, &cli.Int64Flag{Name: f.name, Value: fv.Int(), Usage: f.usage})
		case float64:
			flags = append(flags, &cli.Float64Flag{Name: f.name, Value: fv.Float(), Usage: f.usage})
		case bool:
			flags = append(flags, &cli.BoolFlag{Name: f.name, Value: fv.Bool(), Usage: f.usage})
		default:
			flags = append(flags, &cli.StringFlag{Name: f.name, Value: formatConfigValue(fv), Usage: f.usage})
		}
	}
	return flags
}

// formatConfigValue writes a list default as its flag text ("512,512").
func formatConfigValue(v reflect.Value) string {
	if v.Kind() != reflect.Slice {
		return ""
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(v.Index(i).Interface())
	}
	return strings.Join(parts, ",")
}

// applyConfigFlags copies the flags given on the command line into the
// struct dst points to and returns their names; flags not given leave dst
// as it is (the defaults, a --config file or the recorded config).
func applyConfigFlags(c *cli.Context, dst any) ([]string, error) {
	v := reflect.ValueOf(dst).Elem()
	var set []string
	for _, s := range trainers.SettingsOf(v.Type()) {
		f := configField{name: s.Flag}
		if !c.IsSet(f.name) {
			continue
		}
		if err := setConfigField(c, s, v.Field(s.Index)); err != nil {
			return set, usagef("--%s: %v", f.name, err)
		}
		set = append(set, f.name)
	}
	return set, nil
}

// setConfigField sets fv, the field of setting s, from its flag: the
// typed flags as parsed, the others (lists, maps, das-params) by the one
// parser of a setting's text (trainers.Setting.Parse); the hyper map is
// merged over a --config file's entries.
func setConfigField(c *cli.Context, s trainers.Setting, fv reflect.Value) error {
	name := s.Flag
	switch p := fv.Addr().Interface().(type) {
	case *string:
		*p = c.String(name)
	case *int:
		*p = c.Int(name)
	case *int64:
		*p = c.Int64(name)
	case *float64:
		x := c.Float64(name)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a finite number", x)
		}
		*p = x
	case *bool:
		*p = c.Bool(name)
	default:
		v, err := s.Parse(c.String(name))
		if err != nil {
			return err
		}
		if m, ok := v.(map[string]float64); ok {
			for k, x := range fv.Interface().(map[string]float64) {
				if _, set := m[k]; !set {
					m[k] = x
				}
			}
		}
		fv.Set(reflect.ValueOf(v))
	}
	return nil
}
