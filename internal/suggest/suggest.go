// Package suggest finds the name a user probably meant: the nearest of a
// set of known names by edit distance, for "did you mean" hints on
// misspelt commands, flags, suite keys and method names.
package suggest

import (
	"errors"
	"fmt"
	"strings"
)

// Distance is the Levenshtein distance between a and b (in bytes): the
// fewest single-byte insertions, deletions and substitutions that turn a
// into b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest is the candidate closest to name (case-insensitively) when it is
// close: an edit distance of at most 2 (at most 1 for names of up to 4
// bytes), or name is a prefix of it of at least 2 bytes. "" when none is.
// Ties go to the earlier candidate.
func Nearest(name string, candidates []string) string {
	name = strings.ToLower(name)
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(name, lc)
		if strings.HasPrefix(lc, name) && len(name) >= 2 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Key returns the known key that an unknown settings key most likely
// means: the same key in another case or with '_' or ' ' for '-'
// (batch_size → batch-size), then an alias (aliases maps a normalised name
// from another tool, such as learning-rate, to a key), then the nearest key
// by Nearest. It returns "" when none is close.
func Key(key string, known []string, aliases map[string]string) string {
	norm := strings.ToLower(strings.NewReplacer("_", "-", " ", "-").Replace(key))
	for _, k := range known {
		if strings.ToLower(k) == norm {
			return k
		}
	}
	if k, ok := aliases[norm]; ok {
		return k
	}
	return Nearest(norm, known)
}

// ErrUnknown is wrapped by every error of Unknown and Check: a name that
// is none of the known ones, which a command line reports as a usage
// error.
var ErrUnknown = errors.New("unknown name")

// Unknown is the error for name, a kind of thing ("loss", "k-NN backend")
// that is none of names: `unknown loss "margni"; did you mean "margin"?`
// when one is close (Nearest), else `unknown loss "x"; have: a, b, …`. It
// wraps ErrUnknown.
func Unknown(kind, name string, names []string) error {
	if near := Nearest(name, names); near != "" {
		return &unknownError{fmt.Sprintf("unknown %s %q; did you mean %q?", kind, name, near), name}
	}
	return &unknownError{fmt.Sprintf("unknown %s %q; have: %s", kind, name, strings.Join(names, ", ")), name}
}

// Check is nil when name is one of names (in any case when fold), else
// Unknown's error.
func Check(kind, name string, names []string, fold bool) error {
	for _, n := range names {
		if n == name || fold && strings.EqualFold(n, name) {
			return nil
		}
	}
	return Unknown(kind, name, names)
}

// Mark is err as an unknown-name error (wrapping ErrUnknown) with err's
// message, for a message of its own shape.
func Mark(err error) error { return &unknownError{msg: err.Error()} }

// UnknownName is the name an error of Unknown or Check refused (wrapped
// or not), and whether err is one.
func UnknownName(err error) (string, bool) {
	var u *unknownError
	if errors.As(err, &u) && u.name != "" {
		return u.name, true
	}
	return "", false
}

type unknownError struct{ msg, name string }

func (e *unknownError) Error() string        { return e.msg }
func (e *unknownError) Is(target error) bool { return target == ErrUnknown }

// Hint is `; did you mean "x"?` for the name of names nearest to name
// (Nearest), or "" when none is close: the ending of a message that
// refuses name in a shape of its own.
func Hint(name string, names []string) string {
	if near := Nearest(name, names); near != "" && near != name {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}
