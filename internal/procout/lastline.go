package procout

import (
	"bytes"
	"strings"
	"sync"
)

// MaxLine is the most bytes of a line LastLine keeps.
const MaxLine = 512

// LastLine remembers the last non-empty line written to it (its first
// MaxLine bytes), or the unterminated rest when there is one, so that a
// failed child is reported by its own last message. Each byte written is
// looked at a bounded number of times: a megabyte of blank lines costs
// what a megabyte of text does.
type LastLine struct {
	mu      sync.Mutex
	partial []byte // the current line so far (at most 2·MaxLine bytes: its head and its tail)
	long    bool   // partial lost its middle
	last    string
}

// Write never fails.
func (l *LastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.add(p)
			break
		}
		l.add(p[:i])
		if s := bytes.TrimSpace(l.partial); len(s) > 0 {
			l.last = clip(string(s))
		}
		l.partial, l.long = l.partial[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// add appends b to the current line, keeping its last 2·MaxLine bytes (a
// progress bar redrawn with \r and no newline is read from its end).
func (l *LastLine) add(b []byte) {
	if len(b) > 2*MaxLine {
		b = b[len(b)-2*MaxLine:]
		l.long = true
		l.partial = l.partial[:0]
	}
	l.partial = append(l.partial, b...)
	if len(l.partial) > 4*MaxLine {
		l.partial = append(l.partial[:0], l.partial[len(l.partial)-2*MaxLine:]...)
		l.long = true
	}
}

func clip(s string) string {
	if len(s) > MaxLine {
		return s[:MaxLine] + "…"
	}
	return s
}

// String is the last line, or the unterminated rest when there is one
// (after its last \r: a progress bar's current state).
func (l *LastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.last
	if t := strings.TrimSpace(string(l.partial)); t != "" {
		s = t
	}
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return clip(s)
}
