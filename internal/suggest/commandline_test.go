package suggest

import (
	"errors"
	"testing"
)

func TestNearestCommandLine(t *testing.T) {
	names := []string{"emb", "labels", "format"}
	for _, tc := range []struct{ name, want string }{
		{"embeddings", "emb"}, {"la", "labels"}, {"formt", "format"}, {"zzz", ""},
	} {
		if got := NearestCommandLine(tc.name, names); got != tc.want {
			t.Errorf("NearestCommandLine(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFlagParseError(t *testing.T) {
	names := []string{"--loss", "--miner"}
	for _, tc := range []struct{ in, want string }{
		{"flag provided but not defined: -los", "unknown flag --los; did you mean --loss?"},
		{"flag provided but not defined: -zzzzzz", "unknown flag --zzzzzz"},
		{`invalid value "x" for flag -epochs: parse error`, `invalid value "x" for --epochs: parse error`},
		{"flag needs an argument: -loss", "flag needs a value: --loss"},
	} {
		if got := FlagParseError(errors.New(tc.in), names).Error(); got != tc.want {
			t.Errorf("%q → %q, want %q", tc.in, got, tc.want)
		}
	}
}
