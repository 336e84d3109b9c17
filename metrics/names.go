package metrics

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/internal/suggest"
)

// ParseConvention resolves a convention name (exact, lower case) once,
// where a command line or a config is read. An unknown name is an error
// wrapping suggest.ErrUnknown that names the nearest convention, or
// points a pytorch-metric-learning user at pml.
func ParseConvention(name string) (Convention, error) {
	if name == "" {
		return Strict, nil
	}
	names := Conventions()
	for _, c := range names {
		if name == c {
			return Convention(c), nil
		}
	}
	hint := ""
	if near := suggest.Nearest(name, names); near != "" {
		hint = fmt.Sprintf("; did you mean %s?", near)
	} else if l := strings.ToLower(name); strings.Contains(l, "py") || strings.Contains(l, "torch") {
		hint = " (pytorch-metric-learning is pml)"
	}
	return "", suggest.Mark(fmt.Errorf("want strict, roth, pml or pml3%s", hint))
}

// Distances are the distance names Options.Distance takes; l2, dot and
// cos are accepted as euclidean, ip and cosine.
var Distances = []string{"euclidean", "cosine", "ip"}

// CheckDistance is nil for a distance Evaluate takes (any case), else
// suggest.Unknown's error with the nearest name.
func CheckDistance(name string) error {
	switch strings.ToLower(name) {
	case "", "euclidean", "l2", "ip", "dot", "cosine", "cos":
		return nil
	}
	return suggest.Unknown("distance", name, Distances)
}

// CheckName is nil for a metric name Lookup knows (a key, an alias or a
// family member such as R@5); a family member with a number k that no
// member has (P@0) is that error; any other name, a family member whose k
// is no number (R@l) included, is suggest.Unknown's error naming the
// nearest key (family members k = 1, 2, 4, 8 among them: R@l → R@1).
func CheckName(name string) error {
	_, _, ok, err := lookup(name)
	if err != nil {
		if _, k, _ := strings.Cut(name, "@"); isInteger(k) {
			return err
		}
	} else if ok {
		return nil
	}
	var names []string
	for _, d := range known() {
		if !d.Family() {
			names = append(names, d.Key)
			continue
		}
		for _, k := range []int{1, 2, 4, 8} {
			names = append(names, d.member(k))
		}
	}
	return suggest.Unknown("metric", name, names)
}

// isInteger reports whether s is an optionally signed decimal integer.
func isInteger(s string) bool {
	_, err := strconv.Atoi(strings.TrimSpace(s))
	return err == nil
}
