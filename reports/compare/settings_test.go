package compare

import (
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestCheckSettings(t *testing.T) {
	if err := CheckSettings("markdown", 1, 0.95); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format    string
		resamples int
		level     float64
	}{{"tabel", 100, 0.95}, {"json", 0, 0.95}, {"json", 100, 1}, {"json", 100, 0}} {
		if err := CheckSettings(c.format, c.resamples, c.level); !usage.Is(err) {
			t.Errorf("%+v: %v, want a usage error", c, err)
		}
	}
}
