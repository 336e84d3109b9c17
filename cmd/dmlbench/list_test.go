package main

import (
	"bytes"
	"strings"
	"testing"
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
