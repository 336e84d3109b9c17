package trainers

import (
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

// A resumed run may change its epochs, not a hashed setting; a directory
// without run.json has nothing to resume; --method takes KEY=VALUE.
func TestResumeConfig(t *testing.T) {
	rec := Defaults()
	rec.Loss = "margin"
	more := rec
	more.Epochs += 5
	if err := CheckResume(rec, more, "out"); err != nil {
		t.Fatalf("more epochs: %v", err)
	}
	lr := rec
	lr.LR *= 2
	if err := CheckResume(rec, lr, "out"); !usage.Is(err) || !strings.Contains(err.Error(), "--lr") {
		t.Fatalf("a new learning rate: %v", err)
	}
	if _, err := RecordedConfig(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no run to continue") {
		t.Fatalf("empty directory: %v", err)
	}
	m, err := ParseMethod([]string{" reg =rho=0.1", "axis=a,b"})
	if err != nil || m["reg"] != "rho=0.1" || m["axis"] != "a,b" {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := ParseMethod([]string{"=x"}); !usage.Is(err) {
		t.Fatalf("=x: %v", err)
	}
	if v := BuildVersions("1.2"); v["dmlbench"] != "1.2" || v["go"] == "" {
		t.Fatalf("versions %v", v)
	}
}
