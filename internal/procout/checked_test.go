package procout

import (
	"errors"
	"io"
	"testing"
)

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("no space left on device")
	}
	f.n--
	return len(p), nil
}

// The first failed write is kept, and every later write fails with it.
func TestChecked(t *testing.T) {
	c := &Checked{W: &failAfter{n: 1}}
	if _, err := c.Write([]byte("a")); err != nil || c.Err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("b")); err == nil || c.Err == nil {
		t.Fatal("a failed write was not kept")
	}
	if n, err := c.Write([]byte("c")); n != 0 || err != c.Err {
		t.Fatalf("after a failure: %d, %v", n, err)
	}
	if (&Checked{W: io.Discard}).Fd() != ^uintptr(0) {
		t.Fatal("a writer with no descriptor has one")
	}
}
