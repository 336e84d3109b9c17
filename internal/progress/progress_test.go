package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A stage reporting progress gets a bar once it has run past the delay;
// a quick one prints nothing; between stages a spinner shows the time.
func TestStagesDisplay(t *testing.T) {
	var b bytes.Buffer
	p := &stages{w: &b, idleSince: time.Now(), stop: make(chan struct{})}
	p.report("knn", 1, 10)
	if b.Len() != 0 {
		t.Fatalf("a fresh stage printed %q", b.String())
	}
	p.start = time.Now().Add(-2 * progressDelay)
	p.report("knn", 5, 10)
	if !strings.Contains(b.String(), "knn") || !strings.Contains(b.String(), "5/10") {
		t.Fatalf("no k-NN bar: %q", b.String())
	}
	p.report("knn", 10, 10)
	if p.bar != nil || p.cur != "" {
		t.Fatal("bar not finished at done = total")
	}
	b.Reset()
	p.idleSince = time.Now().Add(-2 * progressDelay)
	go p.tick()
	// The spinner shows on the first tick (every 200 ms); a loaded machine
	// may delay it, so wait for it rather than for a fixed time.
	var out string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		out = b.String()
		p.mu.Unlock()
		if strings.Contains(out, "evaluating (k-means, other metrics)") || time.Now().After(deadline) {
			break
		}
	}
	close(p.stop)
	p.mu.Lock()
	p.finish()
	p.mu.Unlock()
	if !strings.Contains(out, "evaluating (k-means, other metrics)") {
		t.Fatalf("no spinner after the k-NN stage within 30 s: %q", out)
	}
}
