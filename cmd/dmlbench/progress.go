package main

import (
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// stageProgress returns a callback that shows a progress bar on stderr for a
// stage once it has run for more than ~1.5 s, so quick runs print nothing.
// Disabled when quiet or when stderr is not a terminal.
func stageProgress(quiet bool) func(stage string, done, total int) {
	if quiet || !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	var mu sync.Mutex
	var cur string
	var start time.Time
	var bar *progressbar.ProgressBar
	return func(stage string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if stage != cur {
			if bar != nil {
				_ = bar.Finish()
			}
			cur, start, bar = stage, time.Now(), nil
		}
		if bar == nil {
			if time.Since(start) < 1500*time.Millisecond || done >= total {
				return
			}
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(stage),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100*time.Millisecond))
		}
		_ = bar.Set(done)
		if done >= total {
			_ = bar.Finish()
		}
	}
}
