package metrics

import (
	"fmt"
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
// family member such as R@5), else suggest.Unknown's error naming the
// nearest key (family members k = 1, 2, 4, 8 among them: R@l → R@1).
func CheckName(name string) error {
	if _, ok := Lookup(name); ok {
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
