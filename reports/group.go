package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
	"sort"
	"strings"
)

// nonSettings are the config keys (compared as normKey) that do not change
// what an experiment measures: the seed (rows pool over it), where data,
// outputs and a teacher run (one per seed) live, how the work is spread,
// and per-run bookkeeping of suite eval records (file paths, warnings),
// which differ from seed to seed.
var nonSettings = map[string]bool{
	"seed": true, "datapath": true, "teacher": true, "chunk": true, "threads": true, "out": true, "resume": true,
	"quiet": true, "saveembeddings": true, "metrics": true,
	"emb": true, "labels": true, "args": true, "extra": true, "warnings": true, "nonfinite": true, "undefined": true,
	"n": true, "dim": true, "classes": true,
}

// setting is one experiment setting of a run: its key as first written
// and its value as text.
type setting struct {
	key, value string
	method     bool // from run.json "method" (else from "config")
}

// Settings returns the experiment settings of a run keyed by normKey: its
// Method keys, then the top-level keys of its config that Method does not
// already hold, less nonSettings.
func Settings(r LoadedRun) map[string]setting {
	out := map[string]setting{}
	for k, v := range r.Method {
		out[normKey(k)] = setting{k, v, true}
	}
	if len(r.Config) == 0 {
		return out
	}
	var cfg map[string]json.RawMessage
	if json.Unmarshal(r.Config, &cfg) != nil {
		return out
	}
	for k, raw := range cfg {
		n := normKey(k)
		if _, ok := out[n]; ok || nonSettings[n] {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				s = b.String()
			} else {
				s = string(raw)
			}
		}
		out[n] = setting{k, s, false}
	}
	return out
}

// settingValue is a run's value for key ("-" when it has none).
func settingValue(s map[string]setting, key string) string {
	if v, ok := s[normKey(key)]; ok && v.value != "" {
		return v.value
	}
	return "-"
}

// checkGroupBy fails, listing the valid keys, when a group-by key is no
// setting of any run.
func checkGroupBy(runs []LoadedRun, keys []string) error {
	valid := map[string]string{}
	for _, r := range runs {
		for n, s := range Settings(r) {
			if _, ok := valid[n]; !ok {
				valid[n] = s.key
			}
		}
	}
	for _, k := range keys {
		if _, ok := valid[normKey(k)]; !ok {
			names := make([]string, 0, len(valid))
			for _, v := range valid {
				names = append(names, v)
			}
			sort.Strings(names)
			return usage.Errorf("reports: unknown group-by key %q; the runs have: %s%s", k, strings.Join(names, ", "), suggest.Hint(k, names))
		}
	}
	return nil
}

// splitKeys returns the settings, other than the group-by keys, that tell
// apart the runs of one group (display names): method keys first, in
// canonical order, then config keys alphabetically, each kept only when it
// separates runs the keys before it do not (so a config key implied by a
// method key, e.g. rho-reg by regularizer=rho, is not repeated). Such a
// group mixes experiments, not only seeds.
func splitKeys(settings []map[string]setting, groupBy []string) []string {
	grouped := map[string]bool{}
	for _, k := range groupBy {
		grouped[normKey(k)] = true
	}
	names := map[string]setting{}
	for _, s := range settings {
		for n, v := range s {
			if _, ok := names[n]; !ok && !grouped[n] {
				names[n] = v
			}
		}
	}
	var method, config []string
	for n, v := range names {
		if v.method {
			method = append(method, n)
		} else {
			config = append(config, n)
		}
	}
	rank := map[string]int{}
	for i, k := range CanonicalMethodKeys {
		rank[normKey(k)] = i - len(CanonicalMethodKeys)
	}
	sort.Slice(method, func(i, j int) bool {
		if rank[method[i]] != rank[method[j]] {
			return rank[method[i]] < rank[method[j]]
		}
		return method[i] < method[j]
	})
	sort.Strings(config)
	var chosen []string
	for _, n := range append(method, config...) {
		parts := map[string]string{} // values of chosen keys → this key's value
		for _, s := range settings {
			id := ""
			for _, c := range chosen {
				id += settingValue(s, c) + "\x00"
			}
			v := settingValue(s, n)
			if prev, ok := parts[id]; ok && prev != v {
				chosen = append(chosen, n)
				break
			}
			parts[id] = v
		}
	}
	out := make([]string, len(chosen))
	for i, n := range chosen {
		out[i] = names[n].key
	}
	return out
}

// splitLabel is the suffix naming a run's values of the split keys, e.g.
// " [arch=cnn epochs=3]".
func splitLabel(s map[string]setting, keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + settingValue(s, k)
	}
	return " [" + strings.Join(parts, " ") + "]"
}

// groupRuns forms the rows of one table: runs with equal group-by values,
// then, where such a group's runs differ in another setting, one row per
// combination of those settings, labelled with them (Notes say so). Rows
// pool only runs that differ in the seed. The runs of each row keep their
// order; labels are returned sorted.
func groupRuns(ds string, runs []LoadedRun, groupBy []string) (labels []string, rows map[string][]LoadedRun, method map[string]map[string]string, notes []string) {
	settings := make([]map[string]setting, len(runs))
	first := map[string][]int{}
	var order []string
	for i, r := range runs {
		settings[i] = Settings(r)
		vals := make([]string, len(groupBy))
		for j, k := range groupBy {
			vals[j] = settingValue(settings[i], k)
		}
		l := "all"
		if len(vals) > 0 {
			l = strings.Join(vals, "/")
		}
		if _, ok := first[l]; !ok {
			order = append(order, l)
		}
		first[l] = append(first[l], i)
	}
	rows = map[string][]LoadedRun{}
	method = map[string]map[string]string{}
	for _, l := range order {
		idx := first[l]
		ss := make([]map[string]setting, len(idx))
		rs := make([]LoadedRun, len(idx))
		for j, i := range idx {
			ss[j], rs[j] = settings[i], runs[i]
		}
		split := splitKeys(ss, groupBy)
		if len(split) > 0 {
			notes = append(notes, fmt.Sprintf("%s %s: runs differ in %s besides the seed; split into one row per value (group by them to choose the row keys)", ds, l, strings.Join(split, ", ")))
		}
		for j, r := range rs {
			label := l + splitLabel(ss[j], split)
			if _, ok := rows[label]; !ok {
				labels = append(labels, label)
				m := map[string]string{}
				for _, k := range append(append([]string(nil), groupBy...), split...) {
					m[k] = ss[j][normKey(k)].value
				}
				method[label] = m
			}
			rows[label] = append(rows[label], r)
		}
	}
	sort.Strings(labels)
	return labels, rows, method, notes
}

// RunGroup is the runs that share one group label (one curve, one point).
type RunGroup struct {
	Label string
	Runs  []LoadedRun
}

// GroupRuns groups runs by dataset and the groupBy Method keys (nil: the
// keys whose values differ between runs, see VaryingKeys; an empty non-nil
// slice puts all runs of a dataset in one group). Labels are GroupLabel
// values, prefixed with "dataset: " when the runs span several datasets.
// Groups are sorted by label.
func GroupRuns(runs []LoadedRun, groupBy []string) []RunGroup {
	if groupBy == nil && len(runs) > 0 {
		groupBy, _ = VaryingKeys(runs)
	}
	ds := map[string]bool{}
	for _, r := range runs {
		ds[r.Dataset] = true
	}
	idx := map[string]int{}
	var gs []RunGroup
	for _, r := range runs {
		l := GroupLabel(r.Method, groupBy)
		if len(ds) > 1 {
			l = r.Dataset + ": " + l
		}
		i, ok := idx[l]
		if !ok {
			i = len(gs)
			idx[l] = i
			gs = append(gs, RunGroup{Label: l})
		}
		gs[i].Runs = append(gs[i].Runs, r)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].Label < gs[j].Label })
	return gs
}

// Without returns keys minus drop.
func Without(keys []string, drop string) []string {
	var out []string
	for _, k := range keys {
		if !SameKey(k, drop) {
			out = append(out, k)
		}
	}
	return out
}

func normKey(k string) string {
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(k))
}

// SameKey reports whether two method keys name the same setting: they
// compare ignoring case, '-', '_' and spaces (embed_dim is embed-dim).
func SameKey(a, b string) bool { return normKey(a) == normKey(b) }
