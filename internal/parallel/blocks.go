package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Threads resolves a thread count: n <= 0 means GOMAXPROCS. It is the one
// place the module reads the host's thread count (threads_test.go checks).
func Threads(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// For runs body(i) for i in [0, n) on up to threads goroutines (threads <= 0
// means GOMAXPROCS). It is Blocks without scratch space, context or errors.
func For(threads, n int, body func(i int)) {
	_ = Blocks(context.Background(), threads, n, func() struct{} { return struct{}{} },
		func(_ struct{}, i int) error { body(i); return nil })
}

// Blocks runs body(scratch, b) for every block b in [0, nblocks) on up to
// threads goroutines (threads <= 0 means GOMAXPROCS). Each worker calls
// newScratch once and passes its value to every block it runs.
//
// The context is checked before each block; once it is done, or once a body
// returns an error, no new block starts and Blocks returns the first error
// seen (ctx.Err() for a cancellation). With one worker the blocks run on the
// calling goroutine in order.
func Blocks[S any](ctx context.Context, threads, nblocks int, newScratch func() S, body func(s S, b int) error) error {
	if nblocks <= 0 {
		return ctx.Err()
	}
	threads = min(Threads(threads), nblocks)
	if threads == 1 {
		s := newScratch()
		for b := 0; b < nblocks; b++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := body(s, b); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next    atomic.Int64
		stop    atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		stop.Store(true)
	}
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newScratch()
			for !stop.Load() {
				b := int(next.Add(1) - 1)
				if b >= nblocks {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := body(s, b); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
