package main

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// A configField is one field of a settings struct bound to a flag: the
// flag's name is the field's `flag` tag, else its json key; its help the
// `usage` tag. Fields tagged flag:"-" or json:"-" have no flag.
type configField struct {
	name  string
	index int
	usage string
}

func configFields(t reflect.Type) []configField {
	var out []configField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if fl := f.Tag.Get("flag"); fl != "" {
			name = fl
		}
		if name == "" || name == "-" {
			continue
		}
		out = append(out, configField{name: name, index: i, usage: f.Tag.Get("usage")})
	}
	return out
}

// configFlags declares one urfave/cli flag per field of the struct that
// defaults points to, with the field's value there as the flag's default:
// a setting is declared once, in the struct, and the default the help shows
// is the one a run gets. Lists, maps and parameter sets are string flags
// parsed by setConfigField.
func configFlags(defaults any) []cli.Flag {
	v := reflect.ValueOf(defaults).Elem()
	var flags []cli.Flag
	for _, f := range configFields(v.Type()) {
		fv := v.Field(f.index)
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
	for _, f := range configFields(v.Type()) {
		if !c.IsSet(f.name) {
			continue
		}
		if err := setConfigField(c, f.name, v.Field(f.index)); err != nil {
			return set, usagef("--%s: %v", f.name, err)
		}
		set = append(set, f.name)
	}
	return set, nil
}

func setConfigField(c *cli.Context, name string, fv reflect.Value) error {
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
	case *[]int:
		s := strings.TrimSpace(c.String(name))
		if s == "" || s == "none" {
			*p = []int{}
			return nil
		}
		ints, err := parseInts(s)
		if err != nil {
			return err
		}
		*p = ints
	case *[]string:
		*p = splitList(c.String(name))
	case *map[string]float64:
		m := map[string]float64{}
		for k, x := range *p { // merged over a --config file's entries
			m[k] = x
		}
		for _, kv := range splitList(c.String(name)) {
			k, val, ok := strings.Cut(kv, "=")
			x, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if !ok || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%q is not name=number", kv)
			}
			m[strings.TrimSpace(k)] = x
		}
		*p = m
	case **regularizers.DASParams:
		d, err := regularizers.ParseDASParams(c.String(name))
		if err != nil {
			return err
		}
		*p = &d
	default:
		return fmt.Errorf("no flag binding for %s", fv.Type())
	}
	return nil
}
