package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
	"github.com/dmlbench/dmlbench/trainers/samplers"
)

// listMethods prints the registered losses, miners, samplers or model
// architectures (name and one-line summary, tab-separated for list's
// aligned writer); it returns false for any other kind.
func listMethods(kind string, w io.Writer) (bool, error) {
	var err error
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	switch kind {
	case "losses":
		p("LOSS\tSUMMARY\tHYPER-PARAMETERS (defaults)\n")
		for _, l := range losses.All() {
			p("%s\t%s\t%s\n", l.Name, l.Summary, hyperList(l.Hyper))
		}
	case "miners":
		p("MINER\tSUMMARY\n")
		for _, m := range miners.All() {
			p("%s\t%s\n", m.Name, m.Summary)
		}
	case "samplers":
		p("SAMPLER\tSUMMARY\n")
		for _, s := range samplers.All() {
			p("%s\t%s\n", s.Name, s.Summary)
		}
	case "regularizers":
		p("REGULARIZER\tFLAGS\tSUMMARY\n")
		for _, r := range regularizers.All() {
			p("%s\t%s\t%s\n", r.Name, r.Flags, r.Summary)
		}
	case "archs":
		p("ARCH\tSUMMARY\n")
		for _, n := range model.Names() {
			p("%s\t%s\n", n, model.Summary(n))
		}
	default:
		return false, nil
	}
	return true, err
}

func hyperList(h map[string]float64) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, h[k])
	}
	return strings.Join(parts, " ")
}
