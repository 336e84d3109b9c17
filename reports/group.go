package reports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// nonSettings are the config keys (compared as normKey) that do not change
// what an experiment measures: the seed (rows pool over it), where data and
// outputs live, how the work is spread, and per-run bookkeeping of suite
// eval records (file paths, warnings), which differ from seed to seed.
var nonSettings = map[string]bool{
	"seed": true, "datapath": true, "chunk": true, "threads": true, "out": true, "resume": true,
	"quiet": true, "saveembeddings": true, "metrics": true,
	"emb": true, "labels": true, "args": true, "extra": true, "warnings": true, "nonfinite": true,
	"n": true, "dim": true, "classes": true,
}

// setting is one experiment setting of a run: its key as first written
// and its value as text.
type setting struct{ key, value string }

// Settings returns the experiment settings of a run keyed by normKey: its
// Method keys, then the top-level keys of its config that Method does not
// already hold, less nonSettings.
func Settings(r LoadedRun) map[string]setting {
	out := map[string]setting{}
	for k, v := range r.Method {
		out[normKey(k)] = setting{k, v}
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
			s = string(raw)
		}
		out[n] = setting{k, s}
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
			return fmt.Errorf("reports: unknown group-by key %q; the runs have: %s", k, strings.Join(names, ", "))
		}
	}
	return nil
}

// splitKeys returns the settings, other than the group-by keys, whose
// values differ between the runs of one group (display names, sorted).
// Such a group mixes experiments, not only seeds.
func splitKeys(runs []LoadedRun, settings []map[string]setting, groupBy []string) []string {
	grouped := map[string]bool{}
	for _, k := range groupBy {
		grouped[normKey(k)] = true
	}
	keys := map[string]string{}
	for _, s := range settings {
		for n, v := range s {
			if !grouped[n] {
				if _, ok := keys[n]; !ok {
					keys[n] = v.key
				}
			}
		}
	}
	var out []string
	for n, name := range keys {
		v0 := settingValue(settings[0], n)
		for _, s := range settings[1:] {
			if settingValue(s, n) != v0 {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
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
		split := splitKeys(rs, ss, groupBy)
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
