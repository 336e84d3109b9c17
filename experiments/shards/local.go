package shards

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// LogFile is where RunLocal writes the output of shard i.
func LogFile(dir string, i int) string {
	return filepath.Join(dir, "logs", fmt.Sprintf("shard%d.log", i))
}

// RunLocal runs the shards of j that have no partial yet, parallel at a
// time, each as its own process (stdout and stderr to LogFile), and says
// on log what it runs. env is added to each process's environment (e.g.
// GOMAXPROCS). The first failure stops the shards not yet started and is
// returned with the last line of its log.
func RunLocal(ctx context.Context, j Job, parallel int, env []string, log io.Writer) error {
	if err := j.writeManifest(""); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(j.Dir, "logs"), 0o755); err != nil {
		return err
	}
	todo := j.Missing()
	fmt.Fprintf(log, "eval: %d shards, %d done, running %d (%d at a time) in %s\n", j.Shards, j.Shards-len(todo), len(todo), max(1, parallel), j.Dir)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range max(1, parallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := runShard(ctx, j, i, env); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	if m := j.Missing(); len(m) > 0 {
		return fmt.Errorf("shards %v have no partial result (interrupted?); run the same command again to finish them", m)
	}
	return ctx.Err()
}

// runShard runs shard i to completion.
func runShard(ctx context.Context, j Job, i int, env []string) error {
	args := j.ShardArgs(i)
	f, err := os.Create(LogFile(j.Dir, i))
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("shard %d/%d failed (%v): %s (log %s)", i, j.Shards, err, lastLine(LogFile(j.Dir, i)), LogFile(j.Dir, i))
	}
	return nil
}

// lastLine is the last non-empty line of the file at path.
func lastLine(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(bytes.TrimSpace(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
