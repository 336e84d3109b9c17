package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// Fingerprint is every setting of a spec that its cells or results depend
// on, one canonical JSON text per key (methods.NAME per method), and the
// SHA-256 of every file of a command method's trainer (file:PATH, PATH
// relative to the spec's directory; cell.Provenance). The output
// directory, the slurm block and the spec's path are not in it.
func (s *Spec) Fingerprint() map[string]string {
	j := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // every value is a plain setting
		}
		return string(b)
	}
	fp := map[string]string{
		"dataset": j(s.Dataset), "seed": j(s.Seed), "search": j(s.Search), "folds": j(s.Folds),
		"objective": j(s.Objective), "max-parallel": j(s.MaxParallel), "tpe": j(s.TPE), "fixed": j(s.Fixed),
		"final.metrics": j(s.FinalMetrics), "final.join": j(s.Join), "budget": j(s.Budget), "final.seeds": j(s.FinalSeeds),
	}
	if s.SearchRepeats > 1 {
		fp["search-repeats"] = j(s.SearchRepeats)
	}
	for _, m := range s.Methods {
		me := map[string]any{"loss": m.Loss, "miner": m.Miner, "fixed": m.Fixed, "space": m.Space, "hyper": m.hyper}
		if len(m.Command) > 0 {
			me["command"] = m.Command
			if len(m.Files) > 0 {
				me["files"] = m.Files
			}
		}
		for f, h := range m.fileHashes {
			fp[fileKey+f] = j(h)
		}
		fp["methods."+m.Name] = j(me)
	}
	return fp
}

// fileKey prefixes the fingerprint keys of a trainer's files.
const fileKey = "file:"

// Change is how a spec differs from the one its output directory was
// last run with.
type Change struct {
	// Extended: the spec only adds work (a larger budget, more final
	// seeds, new methods); a run does exactly that work and then equals a
	// run of the new spec from scratch.
	Extended bool
	// Keys are the extended keys, sorted.
	Keys []string
	// Restart: the spec changed, but nothing in the directory was
	// produced under the old one (Plan.Produced): the run starts it over
	// (Plan.Restart).
	Restart bool
}

// ErrSpecChanged is wrapped by the error of a spec that changed in a way
// its output directory cannot follow.
var ErrSpecChanged = errors.New("spec changed")

// CheckSpec compares the spec with the fingerprint in tune.json of the
// output directory (none: a new directory). Changes that only extend the
// spec are allowed; so is any change while nothing has been produced
// (Change.Restart); any other is refused in one line naming the keys.
func (p *Plan) CheckSpec() (Change, error) {
	sum, err := ReadSummary(p.Out)
	if errors.Is(err, os.ErrNotExist) {
		return Change{}, nil
	}
	if err != nil {
		return Change{}, err
	}
	if sum.Fingerprint == nil {
		return Change{}, nil // a tune.json without a fingerprint: nothing to compare
	}
	ch, err := compareFingerprints(sum.Fingerprint, p.Spec.Fingerprint(), p.Out)
	if errors.Is(err, ErrSpecChanged) {
		if produced, perr := p.Produced(); perr == nil && !produced {
			return Change{Restart: true}, nil
		}
	}
	return ch, err
}

func compareFingerprints(old, cur map[string]string, out string) (Change, error) {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	var ext, changed, files []string
	for k := range keys {
		o, hadOld := old[k]
		c, hasCur := cur[k]
		switch {
		case o == c:
		case !hadOld && (strings.HasPrefix(k, "methods.") || k == "search-repeats"):
			ext = append(ext, k)
		case hadOld && hasCur && extends(k, o, c):
			ext = append(ext, k)
		case strings.HasPrefix(k, fileKey) && !hadOld:
			// a directory of a build that did not hash files: recorded from now on
		case strings.HasPrefix(k, fileKey):
			files = append(files, strings.TrimPrefix(k, fileKey))
		default:
			changed = append(changed, k)
		}
	}
	sort.Strings(ext)
	sort.Strings(changed)
	sort.Strings(files)
	if len(files) > 0 {
		return Change{}, fmt.Errorf("%w: %s changed since %s was run (its SHA-256 differs): the table would mix trials of two versions of the trainer; restore it or use a new --out",
			ErrSpecChanged, strings.Join(files, ", "), out)
	}
	if len(changed) > 0 {
		return Change{}, fmt.Errorf("%w since %s was run (%s): restore it or use a new --out; only a larger budget, more final seeds, more search repeats and new methods extend a tune directory",
			ErrSpecChanged, out, strings.Join(changed, ", "))
	}
	return Change{Extended: len(ext) > 0, Keys: ext}, nil
}

// extends reports whether the value c of key k only adds to o: a larger
// budget, or final seeds that keep the old ones.
func extends(k, o, c string) bool {
	switch k {
	case "budget", "search-repeats":
		var a, b int
		return json.Unmarshal([]byte(o), &a) == nil && json.Unmarshal([]byte(c), &b) == nil && b > a
	case "final.seeds":
		var a, b []int64
		if json.Unmarshal([]byte(o), &a) != nil || json.Unmarshal([]byte(c), &b) != nil {
			return false
		}
		for _, v := range a {
			if !slices.Contains(b, v) {
				return false
			}
		}
		return true
	}
	return false
}
