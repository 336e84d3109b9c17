package trainers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An empty --config file is named as such, not reported as "EOF".
func TestLoadConfigFileEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadConfigFile(p)
	if err == nil || !strings.Contains(err.Error(), "is empty") || strings.HasSuffix(err.Error(), "EOF") {
		t.Fatalf("empty config: %v", err)
	}
}
