package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/losses"
)

// TestListLossesDefaults: `dmlbench list losses` shows, for every loss, its
// registered summary and exactly the defaults of Info.Hyper, each value
// round-tripping to the same float64.
func TestListLossesDefaults(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"dmlbench", "list", "losses", "--format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("list losses: exit %d: %s", code, errb.String())
	}
	var entries []map[string]string
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(losses.All()) {
		t.Fatalf("%d entries for %d losses", len(entries), len(losses.All()))
	}
	for _, e := range entries {
		info, ok := losses.Lookup(e["loss"])
		if !ok {
			t.Errorf("unknown loss %q listed", e["loss"])
			continue
		}
		if e["summary"] != info.Summary || strings.Contains(e["summary"], "{{") {
			t.Errorf("%s: summary %q, registered %q", info.Name, e["summary"], info.Summary)
		}
		shown := map[string]float64{}
		for _, kv := range strings.Fields(e["hyper-parameters"]) {
			k, v, _ := strings.Cut(kv, "=")
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Errorf("%s: %q: %v", info.Name, kv, err)
			}
			shown[k] = x
		}
		if len(shown) != len(info.Hyper) {
			t.Errorf("%s: shows %v, Info.Hyper %v", info.Name, shown, info.Hyper)
		}
		for k, v := range info.Hyper {
			if x, ok := shown[k]; !ok || x != v {
				t.Errorf("%s: %s shown as %v (present %v), Info.Hyper %v", info.Name, k, x, ok, v)
			}
		}
	}
}
