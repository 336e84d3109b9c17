package reports

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
	"github.com/dmlbench/dmlbench/trainers/samplers"
)

// CatalogKinds are the kinds of registered methods Catalog lists.
var CatalogKinds = []string{"metrics", "losses", "miners", "samplers", "regularizers", "archs", "backends", "datasets"}

// Catalog returns the header and one row per registered entry of kind
// (one of CatalogKinds): its name, a one-line definition and, where the
// registry has them, its source, defaults or flags. ok is false for an
// unknown kind.
func Catalog(kind string) (rows [][]string, ok bool) {
	var buf bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&buf, format, a...) }
	switch kind {
	case "metrics":
		p("METRIC\tDEFINITION (strict)\tSOURCE\n")
		for _, m := range metrics.All() {
			p("%s\t%s\t%s\n", m.Key, m.Definition, m.Source)
		}
	case "backends":
		p("BACKEND\tIN THIS BINARY\tSUMMARY\n")
		for _, b := range metrics.Backends.Entries() {
			if b.Available {
				p("%s\tyes\t%s\n", b.Name, b.Value.Summary)
			} else {
				p("%s\tno\t%s (%s)\n", b.Name, b.Summary, b.HowToGet)
			}
		}
	case "datasets":
		p("DATASET\tDESCRIPTION\n")
		for _, n := range fixtures.Names() {
			p("%s\t%s\n", n, fixtures.Describe(n))
		}
	default:
		if !trainerCatalog(kind, p) {
			return nil, false
		}
	}
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows, true
}

// trainerCatalog prints the registered losses, miners, samplers,
// regularisers or model architectures with p, tab-separated; it returns
// false for any other kind.
func trainerCatalog(kind string, p func(format string, a ...any)) bool {
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
		return false
	}
	return true
}

// hyperList is "k=v k=v" of a loss's default hyper-parameters, in key
// order.
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

// WriteCatalog writes rows (a header, then entries) as a table at most
// width columns wide whose long cells wrap at word boundaries; with long,
// one aligned line per entry however wide; with format "json", an array
// of objects keyed by the lower-cased header ("definition (strict)" is
// "definition").
func WriteCatalog(w io.Writer, rows [][]string, format string, long bool, width int) error {
	switch {
	case format == "json":
		return catalogJSON(w, rows)
	case long:
		return catalogLong(w, rows)
	}
	return catalogWrapped(w, rows, width)
}
