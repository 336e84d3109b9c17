package procout

import "io"

// Checked passes writes through to W and remembers the first error (Err),
// so that output lost to a full disk or a closed pipe fails the command
// that wrote it even when it ignored the error.
type Checked struct {
	W   io.Writer
	Err error
}

func (c *Checked) Write(p []byte) (int, error) {
	if c.Err != nil {
		return 0, c.Err
	}
	n, err := c.W.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.Err = err
	}
	return n, err
}

// Fd lets terminal checks see through the wrapper to an *os.File.
func (c *Checked) Fd() uintptr {
	if f, ok := c.W.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
