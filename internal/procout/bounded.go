package procout

import (
	"fmt"
	"io"
	"sync"
)

// Default sizes of Bounded: a child's first and last mebibyte of each
// stream are kept.
const (
	DefaultHead = 1 << 20
	DefaultTail = 1 << 20
)

// Bounded writes the first Head bytes written to it through to W at once,
// keeps only the last Tail bytes of the rest in memory, and writes those
// at Close after a line saying how many bytes were left out between them.
// Memory and output stay bounded however much the child prints.
type Bounded struct {
	W          io.Writer
	Head, Tail int
	// What names the stream in the left-out line ("the command's stderr").
	What string

	mu      sync.Mutex
	passed  int
	tail    []byte
	dropped int64
}

// Write never fails for lack of room; it returns W's error while the head
// is written.
func (b *Bounded) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if b.passed < b.Head {
		k := min(len(p), b.Head-b.passed)
		b.passed += k
		if _, err := b.W.Write(p[:k]); err != nil {
			return 0, err
		}
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.Tail; over > 0 && len(b.tail) >= 2*b.Tail {
		// Amortised: the kept tail is moved once per Tail bytes written.
		b.dropped += int64(over)
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

// Close writes the kept tail, after the line that says what was left out.
func (b *Bounded) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if over := len(b.tail) - b.Tail; over > 0 {
		b.dropped += int64(over)
		b.tail = b.tail[over:]
	}
	if b.dropped > 0 {
		if _, err := fmt.Fprintf(b.W, "\n[dmlbench: %d bytes of %s left out here, not kept anywhere (its first %d and last %d bytes are kept)]\n", b.dropped, b.What, b.Head, b.Tail); err != nil {
			return err
		}
	}
	_, err := b.W.Write(b.tail)
	b.tail = nil
	return err
}

// Dropped is the number of bytes left out so far.
func (b *Bounded) Dropped() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped + int64(max(0, len(b.tail)-b.Tail))
}
