package suggest

import (
	"errors"
	"fmt"
	"strings"
)

// NearestCommandLine is the name of names closest to a flag or command
// name typed on the command line (edit distance ≤ 2,
// name a prefix of it of two or more letters, or it a prefix of name of
// three or more: --embeddings is --emb), or "".
func NearestCommandLine(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := Distance(name, n)
		if strings.HasPrefix(n, name) && len(name) >= 2 || strings.HasPrefix(name, n) && len(n) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// FlagParseError rewrites the flag package's errors as the command line's:
// "--name" with a suggestion for an unknown flag.
func FlagParseError(err error, names []string) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = "--" + strings.TrimLeft(name, "-")
		if near := Nearest(name, names); near != "" {
			return fmt.Errorf("unknown flag %s; did you mean %s?", name, near)
		}
		return fmt.Errorf("unknown flag %s", name)
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		return fmt.Errorf("invalid value %s", strings.Replace(rest, "for flag -", "for --", 1))
	}
	return errors.New(strings.Replace(msg, "flag needs an argument: -", "flag needs a value: --", 1))
}
