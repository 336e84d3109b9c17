package metrics

import (
	"os"
	"strings"
	"testing"
)

// TestExtendingDocExample: the metric example of docs/extending.md is the
// source of a built-in metric word for word, so it compiles and runs (it is
// P@10, tested in precision_test.go).
func TestExtendingDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "## Adding a metric")
	if i < 0 {
		t.Fatal("docs/extending.md has no metric section")
	}
	text = text[i:]
	start := strings.Index(text, "```go\n")
	if start < 0 {
		t.Fatal("no go code block in the metric section")
	}
	text = text[start+len("```go\n"):]
	block := text[:strings.Index(text, "```")]
	src, err := os.ReadFile("registry.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), block) {
		t.Errorf("the metric example of docs/extending.md is not in metrics/registry.go as written:\n%s", block)
	}
	if _, ok := Lookup("P@10"); !ok {
		t.Error("the example's metric is not registered")
	}
}
