package suite

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func writeClaim(t *testing.T, dir string, info ClaimInfo, age time.Duration) {
	t.Helper()
	b, _ := json.Marshal(info)
	p := filepath.Join(dir, ClaimFile)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mt := time.Now().Add(-age)
	os.Chtimes(p, mt, mt)
}

func TestClaimExclusive(t *testing.T) {
	dir := t.TempDir()
	c := &Claimer{Timeout: time.Minute}
	// Eight concurrent claimers: exactly one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	held := make(chan *Claim, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := c.Acquire(dir)
			if err == nil {
				wins.Add(1)
				held <- cl
				return
			}
			var ce *ClaimedError
			if !errors.As(err, &ce) || !errors.Is(err, ErrClaimed) || ce.Info.PID != os.Getpid() {
				t.Errorf("loser got %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d winners", wins.Load())
	}
	cl := <-held
	if _, live := c.Live(dir); !live {
		t.Error("held claim not live")
	}
	cl.Release()
	if _, err := os.Stat(filepath.Join(dir, ClaimFile)); !os.IsNotExist(err) {
		t.Fatalf("claim left after release: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
	cl2, err := c.Acquire(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	cl2.Release()
}

func TestClaimStale(t *testing.T) {
	host, _ := os.Hostname()
	c := &Claimer{Timeout: time.Minute}
	cases := []struct {
		name  string
		info  ClaimInfo
		age   time.Duration
		alive func(string) (bool, bool)
		take  bool
	}{
		{"live holder elsewhere", ClaimInfo{Host: "other-node", PID: 1, Token: "a"}, 10 * time.Second, nil, false},
		{"heartbeat too old", ClaimInfo{Host: "other-node", PID: 1, Token: "a"}, 2 * time.Minute, nil, true},
		{"dead pid on this host", ClaimInfo{Host: host, PID: 1 << 30, Token: "a"}, time.Second, nil, true},
		{"slurm job gone", ClaimInfo{Host: "other-node", PID: 1, Job: "7_3", Token: "a"}, time.Second,
			func(j string) (bool, bool) { return j != "7_3", true }, true},
		{"slurm job queued", ClaimInfo{Host: "other-node", PID: 1, Job: "7_3", Token: "a"}, time.Second,
			func(string) (bool, bool) { return true, true }, false},
		{"squeue unknown", ClaimInfo{Host: "other-node", PID: 1, Job: "7_3", Token: "a"}, time.Second,
			func(string) (bool, bool) { return false, false }, false},
	}
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_JOB_ID", "")
	for _, tc := range cases {
		dir := t.TempDir()
		writeClaim(t, dir, tc.info, tc.age)
		c.JobAlive = tc.alive
		cl, err := c.Acquire(dir)
		if tc.take != (err == nil) {
			t.Errorf("%s: take over = %v, want %v (%v)", tc.name, err == nil, tc.take, err)
		}
		if err == nil {
			info, _, _ := ReadClaim(dir)
			if info.PID != os.Getpid() {
				t.Errorf("%s: claim not rewritten: %+v", tc.name, info)
			}
			cl.Release()
		}
	}
}

// A requeued Slurm task (higher SLURM_RESTART_COUNT) takes over the claim
// of its earlier incarnation, on any node, even though the job is still
// (again) in the queue; a claim of the same job and pid on this host is an
// earlier incarnation too (a reused pid).
func TestClaimRequeuedTask(t *testing.T) {
	t.Setenv("SLURM_ARRAY_JOB_ID", "7")
	t.Setenv("SLURM_ARRAY_TASK_ID", "3")
	t.Setenv("SLURM_RESTART_COUNT", "1")
	dir := t.TempDir()
	writeClaim(t, dir, ClaimInfo{Host: "other-node", PID: 1, Job: "7_3", Token: "a"}, time.Second)
	c := &Claimer{Timeout: time.Minute, JobAlive: func(string) (bool, bool) { return true, true }}
	cl, err := c.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info, _, _ := ReadClaim(dir); info.Job != "7_3" || info.PID != os.Getpid() || info.Restart != 1 {
		t.Errorf("claim %+v", info)
	}
	cl.Release()
	// Another task of the same array does not.
	writeClaim(t, dir, ClaimInfo{Host: "other-node", PID: 1, Job: "7_4", Token: "a"}, time.Second)
	if _, err := c.Acquire(dir); !errors.Is(err, ErrClaimed) {
		t.Errorf("claim of a live sibling task taken over: %v", err)
	}
	host, _ := os.Hostname()
	writeClaim(t, dir, ClaimInfo{Host: host, PID: os.Getpid(), Job: "7_3", Restart: 1, Token: "b"}, time.Second)
	cl, err = c.Acquire(dir)
	if err != nil {
		t.Fatalf("claim of this task, host and pid (a reused pid): %v", err)
	}
	cl.Release()
}

// Two processes of one Slurm job (several suites in one allocation, same
// SLURM_JOB_ID and restart count) respect each other's claims.
func TestClaimSameJobOtherProcess(t *testing.T) {
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_JOB_ID", "77")
	t.Setenv("SLURM_RESTART_COUNT", "")
	host, _ := os.Hostname()
	c := &Claimer{Timeout: time.Minute, JobAlive: func(string) (bool, bool) { return true, true }}
	for _, other := range []ClaimInfo{
		{Host: host, PID: os.Getppid(), Job: "77", Token: "a"}, // a live process on this host
		{Host: "other-node", PID: 1, Job: "77", Token: "a"},    // a process on another node
	} {
		dir := t.TempDir()
		writeClaim(t, dir, other, time.Second)
		if cl, err := c.Acquire(dir); !errors.Is(err, ErrClaimed) {
			cl.Release()
			t.Errorf("claim of %s pid %d in the same job taken over: %v", other.Host, other.PID, err)
		}
	}
}

// A heartbeat time in the future (the holder's clock ahead, or a file
// touched with a future date) does not hold a dead claim for ever: its
// age is then measured from the file's change time.
func TestClaimFutureHeartbeat(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("change times are read on Linux")
	}
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_JOB_ID", "")
	dir := t.TempDir()
	writeClaim(t, dir, ClaimInfo{Host: "other-node", PID: 1, Token: "a"}, -365*24*time.Hour)
	// One timeout and more after the claim was last written.
	later := func() time.Time { return time.Now().Add(3 * time.Minute) }
	c := &Claimer{Timeout: time.Minute, Now: later}
	cl, err := c.Acquire(dir)
	if err != nil {
		t.Fatalf("a claim dated a year ahead blocks the cell: %v", err)
	}
	cl.Release()
	// While fresh by its change time it holds.
	writeClaim(t, dir, ClaimInfo{Host: "other-node", PID: 1, Token: "a"}, -365*24*time.Hour)
	if _, err := (&Claimer{Timeout: time.Minute}).Acquire(dir); !errors.Is(err, ErrClaimed) {
		t.Fatalf("a just-written claim dated ahead was taken over: %v", err)
	}
}

// Taking over a stale claim is atomic: when a second process takes it
// over and claims the cell between the first one's judgement and its
// action, the first one neither removes the second's claim nor runs the
// cell.
func TestClaimTakeoverRace(t *testing.T) {
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_JOB_ID", "")
	dir := t.TempDir()
	writeClaim(t, dir, ClaimInfo{Host: "other-node", PID: 1, Token: "dead"}, time.Hour)
	second := &Claimer{Timeout: time.Minute}
	var secondClaim *Claim
	var secondErr error
	first := &Claimer{Timeout: time.Minute, beforeTakeover: func() {
		if secondClaim == nil && secondErr == nil {
			secondClaim, secondErr = second.Acquire(dir)
		}
	}}
	firstClaim, firstErr := first.Acquire(dir)
	if secondErr != nil {
		t.Fatalf("second claimer: %v", secondErr)
	}
	defer secondClaim.Release()
	if firstErr == nil {
		firstClaim.Release()
		t.Fatal("both processes hold the cell")
	}
	if !errors.Is(firstErr, ErrClaimed) {
		t.Fatalf("first claimer: %v", firstErr)
	}
	if info, _, ok := ReadClaim(dir); !ok || info.Token != secondClaim.info.Token {
		t.Fatalf("claim.json is %+v (ok %v), want the second claimer's", info, ok)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ClaimFile+".*")); len(m) > 0 {
		t.Fatalf("left behind: %v", m)
	}
}

// Temporary and set-aside claim files of killed claimers are removed by
// the next claimer once a minute old.
func TestClaimCleansLeftovers(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Minute)
	var left []string
	for _, n := range []string{ClaimFile + ".abc.tmp", ClaimFile + ".def.stale"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
		left = append(left, p)
	}
	cl, err := (&Claimer{Timeout: time.Minute}).Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	cl.Release()
	for _, p := range left {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left", p)
		}
	}
}

// A claim replaced by someone else is not removed by the former holder.
func TestClaimReleaseKeepsOthers(t *testing.T) {
	dir := t.TempDir()
	c := &Claimer{Timeout: time.Minute}
	cl, err := c.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeClaim(t, dir, ClaimInfo{Host: "other-node", PID: 9, Token: "other"}, 0)
	cl.Release()
	if info, _, ok := ReadClaim(dir); !ok || info.Token != "other" {
		t.Fatalf("the other claim was removed: %+v %v", info, ok)
	}
}

func TestClaimHeartbeat(t *testing.T) {
	dir := t.TempDir()
	c := &Claimer{Timeout: 200 * time.Millisecond}
	cl, err := c.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Release()
	p := filepath.Join(dir, ClaimFile)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	// The heartbeat beats every 50 ms; a loaded machine may delay it, so
	// wait for the refresh, failing only after many missed beats.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) < time.Minute {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("heartbeat did not refresh the claim's mtime within 30 s")
		}
	}
}

// Runner: a cell claimed by a live process elsewhere is left alone (Busy),
// not run and not failed.
func TestRunnerSkipsClaimedCell(t *testing.T) {
	dir := t.TempDir()
	j := Job{Kind: Train, Name: "c", Dir: filepath.Join(dir, "c"), Args: []string{"run"}}
	os.MkdirAll(j.Dir, 0o755)
	writeClaim(t, j.Dir, ClaimInfo{Host: "other-node", PID: 1, Token: "x"}, 0)
	ran := false
	r := &Runner{Bin: "x", Claims: &Claimer{Timeout: time.Minute},
		Exec: func(_ context.Context, _ string, _ []string, _, _ io.Writer) error { ran = true; return nil }}
	res, err := r.Run(context.Background(), []Job{j})
	if err != nil || ran || len(res.Busy) != 1 || len(res.Failed) != 0 {
		t.Fatalf("ran=%v res=%+v err=%v", ran, res, err)
	}
	if _, err := os.Stat(filepath.Join(j.Dir, "log.txt")); err == nil {
		t.Error("a busy cell got a log entry")
	}
}
