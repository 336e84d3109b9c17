package suggest

import (
	"errors"
	"fmt"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"evl", "eval", 1}, {"kitten", "sitting", 3}, {"abc", "", 3}, {"plto", "plot", 2}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"epochs", "extra", "grid", "grids", "triplet", "distance", "hidden"}
	for _, c := range []struct{ in, want string }{
		{"epoch", "epochs"}, {"tripplet", "triplet"}, {"distanse", "distance"}, {"hiden", "hidden"},
		{"Grid", "grid"}, {"zzz", ""}, {"lr", ""},
	} {
		if got := Nearest(c.in, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestKey(t *testing.T) {
	known := []string{"lr", "batch-size", "embed-dim", "epochs", "convention"}
	aliases := map[string]string{"learning-rate": "lr", "compat": "convention"}
	for _, c := range []struct{ in, want string }{
		{"learning_rate", "lr"}, {"Learning-Rate", "lr"}, {"batch_size", "batch-size"}, {"BATCH SIZE", "batch-size"},
		{"embed_dims", "embed-dim"}, {"epoch", "epochs"}, {"compat", "convention"}, {"momentum", ""},
	} {
		if got := Key(c.in, known, aliases); got != c.want {
			t.Errorf("Key(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestUnknown: a close name is suggested, a far one lists every name, both
// wrap ErrUnknown; Check passes known names (any case with fold).
func TestUnknown(t *testing.T) {
	names := []string{"margin", "triplet", "spc-2"}
	for _, c := range []struct{ name, want string }{
		{"margni", `unknown loss "margni"; did you mean "margin"?`},
		{"zzzzzz", `unknown loss "zzzzzz"; have: margin, triplet, spc-2`},
	} {
		err := Unknown("loss", c.name, names)
		if err.Error() != c.want || !errors.Is(err, ErrUnknown) {
			t.Errorf("Unknown(%q) = %v; want %s wrapping ErrUnknown", c.name, err, c.want)
		}
	}
	if Check("loss", "margin", names, false) != nil || Check("sampler", "SPC-2", names, true) != nil {
		t.Error("Check refused a known name")
	}
	err := fmt.Errorf("config: %w", Check("loss", "Margin", names, false))
	if name, ok := UnknownName(err); !errors.Is(err, ErrUnknown) || !ok || name != "Margin" {
		t.Errorf("Check without fold: %v (name %q)", err, name)
	}
}

func TestHint(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"los", `; did you mean "loss"?`}, {"finl", `; did you mean "final"?`}, {"zzzz", ""}, {"loss", ""},
	} {
		if got := Hint(tc.name, []string{"best", "final", "loss", "miner"}); got != tc.want {
			t.Errorf("Hint(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
