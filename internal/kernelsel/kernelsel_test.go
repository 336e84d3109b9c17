package kernelsel

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	if l, err := parse(""); err != nil || l != Best() {
		t.Fatalf("unset: %v, %v; want %v", l, err, Best())
	}
	if l, err := parse(" Portable "); err != nil || l != Portable {
		t.Fatalf("portable: %v, %v", l, err)
	}
	if _, err := parse("sse9"); err == nil || !strings.Contains(err.Error(), "want avx512, avx2 or portable") {
		t.Fatalf("unknown level: %v", err)
	}
	for _, l := range []Level{AVX2, AVX512} {
		got, err := parse(l.String())
		if Supported(l) {
			if err != nil || got != l {
				t.Fatalf("%v: %v, %v", l, got, err)
			}
		} else if err == nil || got != Best() {
			t.Fatalf("unsupported %v accepted: %v, %v", l, got, err)
		}
	}
	if Best() != Portable && !Supported(AVX2) {
		t.Fatal("an assembly level without AVX2")
	}
}
