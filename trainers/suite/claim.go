package suite

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ClaimFile is the name of a cell's claim inside its run directory.
const ClaimFile = "claim.json"

// DefaultClaimTimeout is how old a claim's heartbeat may get before another
// process may take the cell over.
const DefaultClaimTimeout = 10 * time.Minute

// ClaimInfo is the content of a claim file: who runs the cell.
type ClaimInfo struct {
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
	// Job is the Slurm job ("1234_5" for an array task), empty outside Slurm.
	Job string `json:"job,omitempty"`
	// Token tells this claim apart from a later one of the same host and pid.
	Token string `json:"token"`
}

// Claim is a held claim on a run directory. A suite process claims a cell
// before running it and releases the claim when the run has ended, so two
// suite invocations — two local ones, two Slurm submissions, or one of each
// — never run the same cell at once, even on different machines sharing the
// directory over NFS.
//
// Acquisition is create-exclusive in the way that is safe on NFS (the
// open(2) man page's advice for O_EXCL over NFS): the claim is written to a
// unique temporary file, hard-linked to claim.json (link fails if the name
// exists, atomically on the server), and counted as ours when the link
// succeeds or the temporary file's link count became 2 (a retransmitted
// link whose reply was lost). The holder refreshes the file's modification
// time every quarter of the timeout; a claim is stale, and taken over, when
// that heartbeat is older than the timeout, when its holder's pid is gone
// on this host, when its Slurm job has left the queue, or when it names the
// Slurm task of the process asking (a requeued task's earlier incarnation).
type Claim struct {
	path string
	info ClaimInfo
	stop chan struct{}
	done chan struct{}
}

// ErrClaimed is returned (wrapped in a *ClaimedError) when a live claim is
// held by another process.
var ErrClaimed = errors.New("cell is claimed by another process")

// ClaimedError says who holds a cell.
type ClaimedError struct {
	Dir  string
	Info ClaimInfo
}

func (e *ClaimedError) Error() string {
	where := fmt.Sprintf("%s pid %d since %s", e.Info.Host, e.Info.PID, e.Info.Since.Format(time.RFC3339))
	if e.Info.Job != "" {
		where += ", Slurm job " + e.Info.Job
	}
	return fmt.Sprintf("%s is being run by %s", e.Dir, where)
}

func (e *ClaimedError) Unwrap() error { return ErrClaimed }

// Claimer decides when claims are stale.
type Claimer struct {
	// Timeout is the heartbeat age after which a claim is stale
	// (≤ 0: DefaultClaimTimeout).
	Timeout time.Duration
	// JobAlive reports whether a Slurm job is still queued or running
	// (ok false: unknown, e.g. no squeue). Nil: not asked.
	JobAlive func(job string) (alive, ok bool)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

func (c *Claimer) timeout() time.Duration {
	if c == nil || c.Timeout <= 0 {
		return DefaultClaimTimeout
	}
	return c.Timeout
}

func (c *Claimer) now() time.Time {
	if c == nil || c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// SlurmJobID names the Slurm job or array task this process runs in ("" outside Slurm).
func SlurmJobID() string {
	if a, t := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID"); a != "" && t != "" {
		return a + "_" + t
	}
	return os.Getenv("SLURM_JOB_ID")
}

// ReadClaim returns the claim of dir and the age of its heartbeat; ok is
// false when there is none.
func ReadClaim(dir string) (info ClaimInfo, mtime time.Time, ok bool) {
	p := filepath.Join(dir, ClaimFile)
	st, err := os.Stat(p)
	if err != nil {
		return info, mtime, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return info, mtime, false
	}
	// An unreadable claim (torn by a crash) still counts: its mtime ages.
	_ = json.Unmarshal(b, &info)
	return info, st.ModTime(), true
}

// Stale reports whether a claim no longer protects its cell, and why.
func (c *Claimer) Stale(info ClaimInfo, mtime time.Time) (bool, string) {
	if age := c.now().Sub(mtime); age > c.timeout() {
		return true, fmt.Sprintf("heartbeat %s old", age.Round(time.Second))
	}
	if host, _ := os.Hostname(); info.Host == host && info.PID > 0 && !pidAlive(info.PID) {
		return true, fmt.Sprintf("pid %d is gone", info.PID)
	}
	if info.Job != "" && info.Job == SlurmJobID() {
		// One Slurm task runs one incarnation at a time: a claim with this
		// task's id was left by an earlier one (requeued after preemption).
		return true, fmt.Sprintf("left by an earlier run of Slurm task %s", info.Job)
	}
	if info.Job != "" && c != nil && c.JobAlive != nil {
		if alive, ok := c.JobAlive(info.Job); ok && !alive {
			return true, fmt.Sprintf("Slurm job %s has ended", info.Job)
		}
	}
	return false, ""
}

// Live reports whether dir holds a claim that is not stale.
func (c *Claimer) Live(dir string) (ClaimInfo, bool) {
	info, mt, ok := ReadClaim(dir)
	if !ok {
		return info, false
	}
	stale, _ := c.Stale(info, mt)
	return info, !stale
}

// Acquire claims dir (which must exist) or returns a *ClaimedError when a
// live claim is held by someone else. A stale claim is removed and the
// acquisition retried once.
func (c *Claimer) Acquire(dir string) (*Claim, error) {
	host, _ := os.Hostname()
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	info := ClaimInfo{Host: host, PID: os.Getpid(), Since: c.now().UTC().Truncate(time.Second), Job: SlurmJobID(), Token: hex.EncodeToString(tok[:])}
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ClaimFile)
	for attempt := 0; attempt < 2; attempt++ {
		won, err := linkExclusive(path, append(b, '\n'), info.Token)
		if err != nil {
			return nil, fmt.Errorf("claim %s: %w", dir, err)
		}
		if won {
			cl := &Claim{path: path, info: info, stop: make(chan struct{}), done: make(chan struct{})}
			go cl.heartbeat(c.timeout() / 4)
			return cl, nil
		}
		held, mt, ok := ReadClaim(dir)
		if !ok {
			continue // released in between: try again
		}
		stale, _ := c.Stale(held, mt)
		if !stale {
			return nil, &ClaimedError{Dir: dir, Info: held}
		}
		// Remove the stale claim only if it is still the one judged stale
		// (same token), so a fresh claim taken in between survives.
		if again, _, ok := ReadClaim(dir); ok && again.Token == held.Token {
			_ = os.Remove(path)
		}
	}
	held, _, _ := ReadClaim(dir)
	return nil, &ClaimedError{Dir: dir, Info: held}
}

// linkExclusive creates path with content b unless it exists, in the
// NFS-safe way: write a unique file, link it to path, check the link count.
func linkExclusive(path string, b []byte, token string) (bool, error) {
	tmp := fmt.Sprintf("%s.%s.tmp", path, token)
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	lerr := os.Link(tmp, path)
	if lerr == nil {
		return true, nil
	}
	// NFS: the link may have happened even though the call reported an
	// error (lost reply); the link count of tmp tells.
	if st, err := os.Stat(tmp); err == nil {
		if linkCount(st) == 2 {
			return true, nil
		}
	}
	if errors.Is(lerr, os.ErrExist) {
		return false, nil
	}
	return false, lerr
}

func (cl *Claim) heartbeat(every time.Duration) {
	defer close(cl.done)
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-cl.stop:
			return
		case <-t.C:
			now := time.Now()
			_ = os.Chtimes(cl.path, now, now)
		}
	}
}

// Release stops the heartbeat and removes the claim if it is still ours.
func (cl *Claim) Release() {
	if cl == nil {
		return
	}
	close(cl.stop)
	<-cl.done
	if b, err := os.ReadFile(cl.path); err == nil {
		var info ClaimInfo
		if json.Unmarshal(b, &info) == nil && info.Token == cl.info.Token {
			_ = os.Remove(cl.path)
		}
	}
}
