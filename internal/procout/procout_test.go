package procout

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestLastLine(t *testing.T) {
	var l LastLine
	io.WriteString(&l, "a\n\nb")
	io.WriteString(&l, "c\n  \n")
	if l.String() != "bc" {
		t.Fatalf("%q", l.String())
	}
	io.WriteString(&l, "10%\r50%\r")
	if l.String() != "50%" {
		t.Fatalf("%q", l.String())
	}
	io.WriteString(&l, strings.Repeat("x", 10000))
	if s := l.String(); len(s) > MaxLine+3 {
		t.Fatalf("unbounded: %d bytes", len(s))
	}
	io.WriteString(&l, "\nlast words\n")
	if l.String() != "last words" {
		t.Fatalf("%q", l.String())
	}
	long := strings.Repeat("y", 3000) + "\n"
	io.WriteString(&l, long)
	if s := l.String(); !strings.HasPrefix(s, "yyy") || len(s) > MaxLine+3 {
		t.Fatalf("long line kept as %d bytes", len(s))
	}
}

// TestLastLineLinear: a mebibyte of blank lines, in one write and in
// small ones, allocates a bounded amount (a copy of the buffer per line
// is a terabyte here).
func TestLastLineLinear(t *testing.T) {
	blank := bytes.Repeat([]byte("\n"), 1<<20)
	for _, chunk := range []int{1 << 20, 4096, 1} {
		var l LastLine
		io.WriteString(&l, "the error\n")
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < len(blank); i += chunk {
			l.Write(blank[i:min(i+chunk, len(blank))])
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("chunks of %d: %d bytes allocated for 1 MiB of blank lines", chunk, got)
		}
		if l.String() != "the error" {
			t.Errorf("chunks of %d: %q", chunk, l.String())
		}
	}
}

func TestBounded(t *testing.T) {
	var out bytes.Buffer
	b := &Bounded{W: &out, Head: 10, Tail: 8, What: "the command's stdout"}
	for i := range 1000 {
		io.WriteString(b, string(rune('a'+i%26)))
	}
	io.WriteString(b, "THE-END")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.HasPrefix(s, "abcdefghij\n[dmlbench: 989 bytes of the command's stdout left out") || !strings.HasSuffix(s, "lTHE-END") {
		t.Fatalf("%q", s)
	}
	// Under the bounds: everything, in order, nothing added.
	out.Reset()
	b = &Bounded{W: &out, Head: 10, Tail: 8}
	io.WriteString(b, "0123456789abcdefgh")
	b.Close()
	if out.String() != "0123456789abcdefgh" {
		t.Fatalf("%q", out.String())
	}
}

// TestBoundedMemory: 64 MiB through a Bounded keeps its output and
// memory within head + tail.
func TestBoundedMemory(t *testing.T) {
	var out countWriter
	b := &Bounded{W: &out, Head: 1 << 16, Tail: 1 << 16, What: "x"}
	chunk := bytes.Repeat([]byte("spam spam spam\n"), 4096)
	for written := 0; written < 64<<20; written += len(chunk) {
		b.Write(chunk)
		if cap(b.tail) > 8*b.Tail+len(chunk) {
			t.Fatalf("tail buffer grew to %d bytes", cap(b.tail))
		}
	}
	b.Close()
	if out.n > 1<<17+200 {
		t.Fatalf("%d bytes written for head and tail of 64 KiB", out.n)
	}
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }
