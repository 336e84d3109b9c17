package suite

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

// lastLine remembers the last non-empty line written to it (at most 512
// bytes of it), so that a failed child is reported by its own last error
// message instead of a bare "exit status 1".
type lastLine struct {
	mu      sync.Mutex
	partial []byte
	last    string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		if s := strings.TrimSpace(string(l.partial[:i])); s != "" {
			l.last = s
		}
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 4096 { // a progress bar without newlines: keep the tail
		l.partial = append([]byte(nil), l.partial[len(l.partial)-512:]...)
	}
	return len(p), nil
}

// String is the last line, or the unterminated rest when there is one.
func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.last
	if t := strings.TrimSpace(string(l.partial)); t != "" {
		s = t
	}
	if i := strings.LastIndexByte(s, '\r'); i >= 0 { // progress-bar redraws
		s = strings.TrimSpace(s[i+1:])
	}
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}

// withLastLine adds the child's last stderr line to its exit error.
func withLastLine(err error, l *lastLine) error {
	if s := l.String(); s != "" {
		return fmt.Errorf("%w (%s)", err, s)
	}
	return err
}
