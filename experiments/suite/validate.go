package suite

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/internal/suggest"
)

// Problems collects the errors of a suite or tune spec, each once, in the
// order found, so that a spec's every problem is reported in one pass.
type Problems struct {
	msgs []string
	seen map[string]bool
}

// Add records a problem (formatted as by fmt.Sprintf) unless it is known.
func (p *Problems) Add(format string, a ...any) {
	m := fmt.Sprintf(format, a...)
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[m] {
		p.seen[m] = true
		p.msgs = append(p.msgs, m)
	}
}

// Len is the number of problems recorded.
func (p *Problems) Len() int { return len(p.msgs) }

// Err is nil without problems, else a *ProblemsError (one problem per line).
func (p *Problems) Err() error {
	if len(p.msgs) == 0 {
		return nil
	}
	return &ProblemsError{Problems: append([]string(nil), p.msgs...)}
}

// ProblemsError lists the problems found in a suite file, each once, in
// the order found; its message puts one on each line.
type ProblemsError struct{ Problems []string }

func (e *ProblemsError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// yamlError is a YAML syntax or type error in one line per problem, without
// the library's "yaml: unmarshal errors:" framing.
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var p Problems
		for _, e := range te.Errors {
			p.Add("%s", e)
		}
		return p.Err()
	}
	return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}

// mapKey is the value of key in mapping node n (nil when absent).
func mapKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// yamlKeys maps the yaml keys of struct type t to their field types.
func yamlKeys(t reflect.Type) (map[string]reflect.Type, []string) {
	keys := map[string]reflect.Type{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		keys[name] = f.Type
		names = append(names, name)
	}
	return keys, names
}

var (
	listType  = reflect.TypeOf(List(nil))
	flagsType = reflect.TypeOf(Flags(nil))
)

// checkNode adds to p every key of n that type t does not have (naming the
// nearest key it does have) and every value whose type does not fit:
// integers must be written as integers (cpus-per-task: 1.5 is an error,
// not 1), lists and flags must be scalars or lists of scalars.
func checkNode(n *yaml.Node, t reflect.Type, where string, p *Problems) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch {
	case t == listType || t == flagsType:
		switch n.Kind {
		case yaml.ScalarNode:
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if c.Kind != yaml.ScalarNode {
					p.Add("line %d: %s: list items must be single values", c.Line, where)
				}
			}
		default:
			p.Add("line %d: %s: want a value or a list of values", n.Line, where)
		}
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			p.Add("line %d: %s: want a mapping of keys (key: value)", n.Line, where)
			return
		}
		keys, names := yamlKeys(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := keys[k.Value]
			if !ok {
				if near := suggest.Nearest(k.Value, names); near != "" {
					p.Add("line %d: unknown key %q in %s; did you mean %q?", k.Line, k.Value, where, near)
				} else {
					p.Add("line %d: unknown key %q in %s (known: %s)", k.Line, k.Value, where, strings.Join(sortedCopy(names), ", "))
				}
				continue
			}
			sub := k.Value
			if where != "suite" {
				sub = where + "." + k.Value
			}
			checkNode(v, ft, sub, p)
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			p.Add("line %d: %s: want a list", n.Line, where)
			return
		}
		for i, c := range n.Content {
			checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", where, i+1), p)
		}
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		if n.Kind != yaml.ScalarNode {
			p.Add("line %d: %s: want an integer", n.Line, where)
		} else if _, err := strconv.ParseInt(n.Value, 10, 64); err != nil {
			p.Add("line %d: %s: %q is not an integer", n.Line, where, n.Value)
		}
	case t.Kind() == reflect.Bool:
		// YAML 1.2 booleans, and the yes/no/on/off the decoder also takes
		// for a bool field.
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!bool" && !slices.Contains([]string{"yes", "no", "on", "off"}, strings.ToLower(n.Value))) {
			p.Add("line %d: %s: %q is not true or false", n.Line, where, n.Value)
		}
	case t.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			p.Add("line %d: %s: want a single value", n.Line, where)
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			p.Add("line %d: %s: want a mapping (key: value)", n.Line, where)
		}
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// Checker checks a suite's names and cell arguments against the program
// that will run them; `dmlbench suite` builds one from its method
// registries and the flags of its run and eval commands. A nil function
// checks nothing.
type Checker struct {
	// Dataset, Loss, Miner, Sampler and Regularizer check one value of the
	// grid axis of that name; an error names the value and says what is
	// wrong (suggest.Unknown: the nearest known name).
	Dataset, Loss, Miner, Sampler, Regularizer func(value string) error
	// Args checks the arguments of one cell (Job.Args: "run …" or
	// "eval …"), the suite's and the grid's extra flags included.
	Args func(args []string) error
}

// Check validates every grid value with ch and the arguments of every job
// (the cells of s: Jobs). It returns nil or one error listing every
// problem once, one per line; a problem shared by several cells is listed
// once with their count.
func (s *Spec) Check(jobs []Job, ch Checker) error {
	var p Problems
	for i, g := range s.Grids {
		for _, axis := range []struct {
			name  string
			vals  List
			check func(string) error
		}{{"dataset", g.Dataset, ch.Dataset}, {"loss", g.Loss, ch.Loss}, {"miner", g.Miner, ch.Miner},
			{"sampler", g.Sampler, ch.Sampler}, {"regularizer", g.Regularizer, ch.Regularizer}} {
			if axis.check == nil {
				continue
			}
			for _, v := range axis.vals {
				if err := axis.check(v); err != nil {
					p.Add("grid %d: %v", i+1, err)
				}
			}
		}
	}
	if ch.Args != nil {
		type cells struct {
			first string
			n     int
		}
		byMsg := map[string]*cells{}
		var order []string
		for _, j := range jobs {
			err := ch.Args(j.Args)
			if err == nil {
				continue
			}
			m := err.Error()
			if c, ok := byMsg[m]; ok {
				c.n++
				continue
			}
			byMsg[m] = &cells{first: j.Name, n: 1}
			order = append(order, m)
		}
		for _, m := range order {
			c := byMsg[m]
			if c.n == 1 {
				p.Add("cell %s: %s", c.first, m)
			} else {
				p.Add("%d cells (first %s): %s", c.n, c.first, m)
			}
		}
	}
	return p.Err()
}

// List writes each problem on w as "prefix: problem" and returns an
// error that counts them.
func (e *ProblemsError) List(w io.Writer, prefix string) error {
	for _, p := range e.Problems {
		fmt.Fprintf(w, "%s: %s\n", prefix, p)
	}
	return fmt.Errorf("%s: %d problems (listed above); nothing was run", prefix, len(e.Problems))
}
