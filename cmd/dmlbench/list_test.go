package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmlbench/dmlbench/metrics"
)

// TestList: every kind prints a header and at least one entry; an unknown
// kind is a usage error with nothing on stdout.
func TestList(t *testing.T) {
	want := map[string]string{
		"metrics": "MAP@R", "losses": "multisimilarity", "miners": "distance", "samplers": "spc-2",
		"regularizers": "simix", "archs": "cnn", "backends": "exact", "datasets": "omniglot",
	}
	for kind, entry := range want {
		var out, errb bytes.Buffer
		if code := run([]string{"dmlbench", "list", kind}, &out, &errb); code != 0 {
			t.Fatalf("list %s: exit %d: %s", kind, code, errb.String())
		}
		if lines := strings.Count(out.String(), "\n"); lines < 2 || !strings.Contains(out.String(), entry) {
			t.Errorf("list %s: %d lines, no %q:\n%s", kind, lines, entry, out.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"dmlbench", "list", "bogus"}, &out, &errb); code == 0 || out.Len() != 0 {
		t.Errorf("list bogus: exit %d, stdout %q", code, out.String())
	}
}

// TestListWidth: every kind fits 80 columns when stdout is not a terminal
// (the description columns wrap), --long keeps one line per entry, and
// --format json holds the full text of every entry.
func TestListWidth(t *testing.T) {
	listKey := map[string]string{"metrics": "metric", "losses": "loss", "miners": "miner", "samplers": "sampler",
		"regularizers": "regularizer", "archs": "arch", "backends": "backend", "datasets": "dataset"}
	for _, kind := range []string{"metrics", "losses", "miners", "samplers", "regularizers", "archs", "backends", "datasets"} {
		var out, errb bytes.Buffer
		if code := run([]string{"dmlbench", "list", kind}, &out, &errb); code != 0 {
			t.Fatalf("list %s: exit %d: %s", kind, code, errb.String())
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("list %s: %d columns: %q", kind, n, l)
			}
		}
		var long bytes.Buffer
		if code := run([]string{"dmlbench", "list", kind, "--long"}, &long, &errb); code != 0 {
			t.Fatalf("list %s --long: exit %d: %s", kind, code, errb.String())
		}
		var js bytes.Buffer
		if code := run([]string{"dmlbench", "list", kind, "--format", "json"}, &js, &errb); code != 0 {
			t.Fatalf("list %s --format json: exit %d: %s", kind, code, errb.String())
		}
		var entries []map[string]string
		if err := json.Unmarshal(js.Bytes(), &entries); err != nil {
			t.Fatalf("list %s --format json: %v", kind, err)
		}
		if lines := strings.Count(long.String(), "\n"); lines != len(entries)+1 {
			t.Errorf("list %s --long: %d lines for %d entries", kind, lines, len(entries))
		}
		for _, e := range entries {
			if e[listKey[kind]] == "" {
				t.Errorf("list %s --format json: entry %v has no %q", kind, e, listKey[kind])
			}
		}
		// Every word of the long text is in the wrapped table.
		for _, w := range strings.Fields(long.String()) {
			if utf8.RuneCountInString(w) < 60 && !strings.Contains(out.String(), w) {
				t.Errorf("list %s: word %q of --long is missing from the wrapped table", kind, w)
				break
			}
		}
	}
}

// TestListMetricsFromDescriptors: list metrics prints one row per
// descriptor with its definition and source (JSON: full text).
func TestListMetricsFromDescriptors(t *testing.T) {
	var js, errb bytes.Buffer
	if code := run([]string{"dmlbench", "list", "metrics", "--format", "json"}, &js, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	var entries []map[string]string
	if err := json.Unmarshal(js.Bytes(), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(metrics.All()) {
		t.Fatalf("%d entries, %d descriptors", len(entries), len(metrics.All()))
	}
	for i, d := range metrics.All() {
		if e := entries[i]; e["metric"] != d.Key || e["definition"] != d.Definition || e["source"] != d.Source {
			t.Errorf("entry %d = %v, descriptor %s", i, e, d.Key)
		}
	}
}
