package usage

import (
	"errors"
	"fmt"
	"testing"
)

func TestIs(t *testing.T) {
	err := Errorf("--k: %q is not a positive integer", "x")
	if !Is(err) || !Is(fmt.Errorf("eval: %w", err)) {
		t.Fatal("a usage error, wrapped or not, is not recognised")
	}
	if Is(errors.New("no such file")) {
		t.Fatal("a plain error is taken for a usage error")
	}
	if got, want := err.Error(), `--k: "x" is not a positive integer`; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}
