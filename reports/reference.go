package reports

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/dmlbench/dmlbench/internal/usage"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Published results shipped with dmlbench. roth2020.csv is Roth et al. 2020
// (Roth et al. 2020, "Revisiting Training Strategies and Generalization
// Performance in Deep Metric Learning", ICML), supplementary §I, Tab. 4
// (CUB200-2011), Tab. 5 (CARS196) and Tab. 6 (Stanford Online Products),
// transcribed digit for digit.
//
//go:embed published/*.csv
var published embed.FS

// PublishedNames lists the embedded reference tables (usable as
// --reference NAME).
func PublishedNames() []string {
	ents, _ := published.ReadDir("published")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".csv"))
	}
	sort.Strings(names)
	return names
}

// RefValue is one published mean ± std (Std NaN when not published).
type RefValue struct {
	Mean, Std float64
}

// ReferenceRow is one published approach on one dataset.
type ReferenceRow struct {
	Source   string // e.g. "Roth et al. 2020"
	Table    string // e.g. "Tab. 4"
	Dataset  string
	Approach string
	Metrics  map[string]RefValue
}

// Citation is "Source, Table".
func (r ReferenceRow) Citation() string {
	if r.Table == "" {
		return r.Source
	}
	return r.Source + ", " + r.Table
}

// LoadReference reads a published-results CSV: either the name of an
// embedded table (see PublishedNames) or a file path.
func LoadReference(nameOrPath string) ([]ReferenceRow, error) {
	if b, err := published.ReadFile("published/" + nameOrPath + ".csv"); err == nil {
		return ParseReference(bytes.NewReader(b), nameOrPath)
	}
	f, err := os.Open(nameOrPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reports: reference %q is neither a file nor one of the shipped tables %v", nameOrPath, PublishedNames())
		}
		return nil, fmt.Errorf("reports: %w", err)
	}
	defer f.Close()
	return ParseReference(f, nameOrPath)
}

// ReferenceHeader is the column list of a reference CSV. Lines starting
// with '#' are comments. Values are in the unit tables show (percent for
// fraction metrics); std may be empty.
var ReferenceHeader = []string{"source", "table", "dataset", "approach", "metric", "mean", "std"}

// ParseReference parses a reference CSV (long format, one metric per line;
// see ReferenceHeader). Rows keep the order of first appearance.
func ParseReference(r io.Reader, name string) ([]ReferenceRow, error) {
	// Drop comment lines first (encoding/csv's Comment would also drop a
	// quoted field starting with '#').
	var buf bytes.Buffer
	sc := bufio.NewScanner(r)
	line := 0
	var lineNo []int
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(t), "#") || strings.TrimSpace(t) == "" {
			continue
		}
		buf.WriteString(t)
		buf.WriteByte('\n')
		lineNo = append(lineNo, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reports: read %s: %w", name, err)
	}
	cr := csv.NewReader(&buf)
	cr.FieldsPerRecord = len(ReferenceHeader)
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reports: read %s: %w", name, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("reports: %s: empty reference table", name)
	}
	for i, h := range ReferenceHeader {
		if strings.TrimSpace(strings.ToLower(recs[0][i])) != h {
			return nil, fmt.Errorf("reports: %s line %d: header must be %s", name, lineNo[0], strings.Join(ReferenceHeader, ","))
		}
	}
	index := map[string]int{}
	var rows []ReferenceRow
	for i, rec := range recs[1:] {
		ln := lineNo[i+1]
		for j := range rec {
			rec[j] = strings.TrimSpace(rec[j])
		}
		if rec[2] == "" || rec[3] == "" || rec[4] == "" {
			return nil, fmt.Errorf("reports: %s line %d: dataset, approach and metric must not be empty", name, ln)
		}
		mean, err := strconv.ParseFloat(rec[5], 64)
		if err != nil || math.IsNaN(mean) || math.IsInf(mean, 0) {
			return nil, fmt.Errorf("reports: %s line %d: mean %q is not a finite number", name, ln, rec[5])
		}
		std := math.NaN()
		if rec[6] != "" {
			std, err = strconv.ParseFloat(rec[6], 64)
			if err != nil || !(std >= 0) || math.IsInf(std, 0) {
				return nil, fmt.Errorf("reports: %s line %d: std %q is not a finite non-negative number", name, ln, rec[6])
			}
		}
		key := rec[0] + "\x00" + rec[1] + "\x00" + rec[2] + "\x00" + rec[3]
		k, ok := index[key]
		if !ok {
			k = len(rows)
			index[key] = k
			rows = append(rows, ReferenceRow{Source: rec[0], Table: rec[1], Dataset: rec[2], Approach: rec[3], Metrics: map[string]RefValue{}})
		}
		if _, dup := rows[k].Metrics[rec[4]]; dup {
			return nil, fmt.Errorf("reports: %s line %d: %s %s %s given twice", name, ln, rec[2], rec[3], rec[4])
		}
		rows[k].Metrics[rec[4]] = RefValue{Mean: mean, Std: std}
	}
	return rows, nil
}

var datasetAliases = map[string]string{
	"cub": "cub2002011", "cub200": "cub2002011", "cub2002011": "cub2002011",
	"cars": "cars196", "cars196": "cars196",
	"sop": "stanfordonlineproducts", "onlineproducts": "stanfordonlineproducts", "stanfordonlineproducts": "stanfordonlineproducts",
	"inshop": "inshop", "deepfashioninshop": "inshop",
}

func normDataset(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	n := b.String()
	if a, ok := datasetAliases[n]; ok {
		return a
	}
	return n
}

// SameDataset reports whether two dataset names denote the same benchmark:
// equal after lower-casing, dropping punctuation and resolving the usual
// aliases (cub, cub200 → CUB200-2011; cars → CARS196; sop → Stanford
// Online Products).
func SameDataset(a, b string) bool { return normDataset(a) == normDataset(b) }

// referenceDatasets lists the distinct datasets of rows, in order of
// appearance, for messages ("CUB200-2011, CARS196, SOP").
func referenceDatasets(rows []ReferenceRow) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Dataset] {
			seen[r.Dataset] = true
			out = append(out, r.Dataset)
		}
	}
	return strings.Join(out, ", ")
}

func selectReferences(opt Options, dataset string) []ReferenceRow {
	want := dataset
	if opt.ReferenceDataset != "" {
		want = opt.ReferenceDataset
	}
	var out []ReferenceRow
	for _, r := range opt.References {
		if !SameDataset(r.Dataset, want) {
			continue
		}
		if len(opt.ReferenceApproaches) > 0 && !approachWanted(opt.ReferenceApproaches, opt.References, r.Approach) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// approachWanted matches approach against the filter: a filter entry equal
// to some published approach (case-insensitive) selects exactly that
// approach; any other entry selects every approach containing it.
func approachWanted(filter []string, all []ReferenceRow, approach string) bool {
	for _, f := range filter {
		exact := false
		for _, r := range all {
			if strings.EqualFold(r.Approach, f) {
				exact = true
				break
			}
		}
		if exact && strings.EqualFold(approach, f) {
			return true
		}
		if !exact && strings.Contains(strings.ToLower(approach), strings.ToLower(f)) {
			return true
		}
	}
	return false
}

// SetReference gives opt the published rows of ref (LoadReference: a
// shipped table's name or a CSV file) and the approaches of them to keep
// (';'-separated, exact name or substring). Without ref, a dataset or
// approaches given for it (filtersGiven) are a usage error.
func (opt *Options) SetReference(ref, approaches string, filtersGiven bool) error {
	if ref == "" {
		if filtersGiven {
			return usage.Errorf("--reference-dataset and --reference-rows need --reference")
		}
		return nil
	}
	rows, err := LoadReference(ref)
	if err != nil {
		return err
	}
	opt.References = rows
	opt.ReferenceApproaches = SplitList(approaches, ";")
	return nil
}
