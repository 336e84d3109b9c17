package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestBlocksRunsEveryBlockOnce(t *testing.T) {
	t.Parallel()
	for _, threads := range []int{0, 1, 2, 7, 100} {
		for _, n := range []int{0, 1, 5, 1000} {
			seen := make([]atomic.Int32, n)
			var scratches atomic.Int32
			err := Blocks(context.Background(), threads, n,
				func() []int { scratches.Add(1); return make([]int, 4) },
				func(s []int, b int) error { s[0]++; seen[b].Add(1); return nil })
			if err != nil {
				t.Fatalf("threads %d n %d: %v", threads, n, err)
			}
			for b := range seen {
				if c := seen[b].Load(); c != 1 {
					t.Fatalf("threads %d n %d: block %d ran %d times", threads, n, b, c)
				}
			}
			if want := min(Threads(threads), max(n, 0)); n > 0 && int(scratches.Load()) > want {
				t.Fatalf("threads %d n %d: %d scratch spaces, want at most %d", threads, n, scratches.Load(), want)
			}
		}
	}
}

func TestBlocksStopsOnError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var ran atomic.Int32
	err := Blocks(context.Background(), 2, 10000, func() struct{} { return struct{}{} },
		func(_ struct{}, b int) error {
			ran.Add(1)
			if b == 3 {
				return boom
			}
			return nil
		})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if ran.Load() == 10000 {
		t.Fatal("every block ran after an error")
	}
}

func TestBlocksCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, threads := range []int{1, 2} {
		var ran atomic.Int32
		err := Blocks(ctx, threads, 10, func() struct{} { return struct{}{} },
			func(struct{}, int) error { ran.Add(1); return nil })
		if !errors.Is(err, context.Canceled) || ran.Load() != 0 {
			t.Fatalf("threads %d: err %v, %d blocks ran; want context.Canceled and none", threads, err, ran.Load())
		}
	}
}

func TestForSerialOrder(t *testing.T) {
	t.Parallel()
	var got []int
	For(1, 4, func(i int) { got = append(got, i) })
	if len(got) != 4 || got[0] != 0 || got[3] != 3 {
		t.Fatalf("got %v, want 0..3 in order", got)
	}
}
