package tune

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/losses"
)

// reserved are config keys the protocol sets itself.
var reserved = map[string]string{
	"dataset": "give it at the top level", "seed": "the spec's seed and final.seeds set it",
	"val-split": "the folds are the validation split", "select-by": "the objective picks the epoch",
	"save-embeddings": "the final stage saves the test embeddings", "metrics": "use objective and final.metrics",
	"test-time": "not part of the tuning protocol", "loss": "give it per method", "teacher": "not part of the tuning protocol",
}

// costKeys set what a trial costs (steps, rows per step, work per row):
// one method may not set or search them alone, or the budgets are not
// equal.
var costKeys = map[string]bool{
	"epochs": true, "iters-per-epoch": true, "batch-size": true, "arch": true, "hidden": true,
	"channels": true, "embed-dim": true, "size": true, "chunk": true,
}

// methodName is a method name that is a safe directory name.
var methodName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// mapping returns the keys and values of a YAML mapping (older spellings
// in aliases renamed), adding a problem for every key outside known (nil:
// any) with the nearest known key; nil when n is not a mapping.
func (p *problems) mapping(n *yaml.Node, where string, known []string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.Add("%s (line %d): want a mapping of keys", where, n.Line)
		return nil
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, line := n.Content[i].Value, n.Content[i].Line
		if a, ok := aliases[k]; ok && known != nil && contains(known, a) {
			k = a
		}
		if known != nil && !contains(known, k) {
			p.Add("%s", unknownKey(where, k, line, known))
			continue
		}
		if _, dup := m[k]; dup {
			p.Add("%s (line %d): key %s given twice", where, line, k)
			continue
		}
		m[k] = n.Content[i+1]
	}
	return m
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// unknownKey is the one-line error of a key outside known, naming the
// nearest known key when it is close (suggest.Nearest).
func unknownKey(where, key string, line int, known []string) string {
	if best := suggest.Nearest(key, known); best != "" {
		return fmt.Sprintf("%s (line %d): unknown key %q; did you mean %q?", where, line, key, best)
	}
	return fmt.Sprintf("%s (line %d): unknown key %q (known: %s)", where, line, key, strings.Join(known, ", "))
}

// fixedMap decodes a mapping of config keys to their field's values,
// refusing unknown and reserved keys and values of the wrong type.
func (p *problems) fixedMap(n *yaml.Node, where string) map[string]any {
	m := p.mapping(n, where, ConfigKeys())
	out := map[string]any{}
	for k, v := range m {
		if why, ok := reserved[k]; ok {
			p.Add("%s.%s (line %d): set by the tuning protocol (%s)", where, k, v.Line, why)
			continue
		}
		x, err := nodeValue(k, v)
		if err != nil {
			p.Add("%s.%s (line %d): %v", where, k, v.Line, err)
			continue
		}
		out[k] = x
	}
	return out
}

// parseMethods decodes the methods list.
func (s *Spec) parseMethods(n *yaml.Node, p *problems) {
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.Add("methods: want a list of at least one method ({name, loss, space})")
		return
	}
	budgets := map[string]int{}
	for i, mn := range n.Content {
		if m, ok := s.parseMethod(mn, i, budgets, p); ok {
			s.Methods = append(s.Methods, m)
		}
	}
	s.checkBudgets(budgets, p)
}

// checkBudgets makes the per-method budgets (where given) equal to each
// other and to the spec's: the same number of trials for every method, or
// the comparison is not fair.
func (s *Spec) checkBudgets(budgets map[string]int, p *problems) {
	if len(budgets) == 0 {
		return
	}
	names := make([]string, 0, len(budgets))
	for k := range budgets {
		names = append(names, k)
	}
	sort.Strings(names)
	ref, refName := s.Budget, "the spec's budget"
	if ref == 0 {
		ref, refName = budgets[names[0]], names[0]
	}
	for _, k := range names {
		if budgets[k] != ref {
			var parts []string
			for _, m := range s.Methods {
				b := s.Budget
				if v, ok := budgets[m.Name]; ok {
					b = v
				}
				parts = append(parts, fmt.Sprintf("%s %d", m.Name, b))
			}
			p.Add("unequal budgets (%s; %s is %d): every method gets the same number of trials, or the comparison is not fair", strings.Join(parts, ", "), refName, ref)
			s.Budget = ref // one problem, not a second one about the budget
			return
		}
	}
	s.Budget = ref
}

// parseMethod decodes methods[i]; ok is false when it is unusable.
func (s *Spec) parseMethod(mn *yaml.Node, i int, budgets map[string]int, p *problems) (me Method, ok bool) {
	where := fmt.Sprintf("methods[%d]", i)
	m := p.mapping(mn, where, methodKeys)
	if m == nil {
		return me, false
	}
	p.str(m["name"], where+".name", &me.Name)
	p.str(m["loss"], where+".loss", &me.Loss)
	p.str(m["miner"], where+".miner", &me.Miner)
	if _, ok := m["command"]; ok {
		return s.parseCommandMethod(me, m, where, budgets, p)
	}
	if me.Loss == "" {
		p.Add("%s: no loss", where)
		return me, false
	}
	if me.Name == "" {
		me.Name = me.Loss
		if me.Miner != "" {
			me.Name += "-" + me.Miner
		}
	}
	if !methodName.MatchString(me.Name) {
		p.Add("%s: name %q must be letters, digits and _ . + - (not starting with . or -): it names the method's directories", where, me.Name)
		return me, false
	}
	where = "method " + me.Name
	info, known := losses.Lookup(me.Loss)
	if !known {
		p.Add("%s: unknown loss %q (see dmlbench list losses)", where, me.Loss)
		return me, false
	}
	if n := m["budget"]; n != nil {
		var b int
		p.int(n, where+".budget", &b)
		budgets[me.Name] = b
	}
	if n := m["fixed"]; n != nil {
		me.Fixed = p.fixedMap(n, where+".fixed")
		for k := range me.Fixed {
			if costKeys[k] {
				p.Add("%s.fixed.%s: sets what a trial costs, so every method shares it: give it in the spec's fixed", where, k)
			}
		}
	}
	me.hyper = map[string]bool{}
	if n := m["space"]; n != nil {
		n0 := p.Len()
		me.Space = parseSpace(n, where, info, me.hyper, p)
		if p.Len() > n0 {
			return me, false // its problems are reported; no further ones
		}
	}
	return me, true
}

// parseSpace decodes a method's space: config keys and the loss's
// hyper-parameters, sorted by name.
func parseSpace(n *yaml.Node, where string, info losses.Info, hyper map[string]bool, p *problems) search.Space {
	sm := p.mapping(n, where+".space", nil)
	hyperNames := make([]string, 0, len(info.Hyper))
	for h := range info.Hyper {
		hyperNames = append(hyperNames, h)
	}
	known := append(ConfigKeys(), hyperNames...)
	order := make([]string, 0, len(sm))
	for k := range sm {
		order = append(order, k)
	}
	sort.Strings(order)
	var space search.Space
	for _, k := range order {
		w := where + ".space." + k
		if why, bad := reserved[k]; bad {
			p.Add("%s: cannot be searched (%s)", w, why)
			continue
		}
		if costKeys[k] {
			p.Add("%s: sets what a trial costs, so it cannot be searched for one method (equal budgets); give it in the spec's fixed", w)
			continue
		}
		_, isCfg := configFields[k]
		_, isHyper := info.Hyper[k]
		if !isCfg && !isHyper {
			p.Add("%s", unknownKey(where+".space", k, sm[k].Line, known))
			continue
		}
		q, ok := parseRange(sm[k], w, p)
		if !ok {
			continue
		}
		q.Name = k
		hyper[k] = isHyper && !isCfg
		if !checkParam(&q, hyper[k], w, p) {
			continue
		}
		space = append(space, q)
	}
	return space
}

// checkParam checks one searched parameter: its values parsed as `dmlbench
// run` parses the setting and distinct after parsing; a range only over a
// numeric setting (integer settings get integer ranges).
func checkParam(q *search.Param, hyper bool, where string, p *problems) bool {
	if q.Categorical() {
		seen := map[string]string{}
		ok := true
		for _, v := range q.Values {
			var x any
			var err error
			if hyper {
				x, err = trainers.ParseFinite(v)
			} else {
				x, err = textValue(q.Name, v)
			}
			if err != nil {
				p.Add("%s: value %v", where, err)
				ok = false
				continue
			}
			key := fmt.Sprintf("%#v", x)
			if prev, dup := seen[key]; dup {
				p.Add("%s: values %q and %q are the same setting", where, prev, v)
				ok = false
			}
			seen[key] = v
		}
		return ok
	}
	if !hyper {
		switch configFields[q.Name].Type.String() {
		case "int", "int64":
			q.Int = true
		case "float64":
		default:
			p.Add("%s: a range needs a numeric setting; give values: [...]", where)
			return false
		}
	}
	if err := q.Validate(); err != nil {
		p.Add("%s", strings.Replace(err.Error(), q.Name+": ", where+": ", 1))
		return false
	}
	return true
}

// parseRange decodes {low, high, log, int} or {values: [...]}.
func parseRange(n *yaml.Node, where string, p *problems) (search.Param, bool) {
	var q search.Param
	m := p.mapping(n, where, rangeKeys)
	if m == nil {
		return q, false
	}
	if v, ok := m["values"]; ok {
		if len(m) > 1 {
			p.Add("%s (line %d): give values or low/high, not both", where, n.Line)
			return q, false
		}
		var l suite.List
		if err := v.Decode(&l); err != nil {
			p.Add("%s.values (line %d): want a list of values", where, v.Line)
			return q, false
		}
		if len(l) == 0 {
			p.Add("%s (line %d): empty values list", where, n.Line)
			return q, false
		}
		q.Values = l
		return q, true
	}
	lo, okL := m["low"]
	hi, okH := m["high"]
	if !okL || !okH {
		p.Add("%s (line %d): want low and high (or values)", where, n.Line)
		return q, false
	}
	n0 := p.Len()
	p.float(lo, where+".low", &q.Low)
	p.float(hi, where+".high", &q.High)
	p.bool(m["log"], where+".log", &q.Log)
	p.bool(m["int"], where+".int", &q.Int)
	return q, p.Len() == n0
}
