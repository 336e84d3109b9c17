package suite

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	// Restart is the Slurm restart count of the job (SLURM_RESTART_COUNT:
	// how often it was requeued), 0 outside Slurm.
	Restart int `json:"restart,omitempty"`
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
// time every quarter of the timeout. A claim is stale, and taken over, when
// that heartbeat is older than the timeout (measured on the file's change
// time, which the file's server sets, when the modification time lies in
// the future: a holder whose clock runs ahead), when its holder's pid is
// gone on this host, when its Slurm job has left the queue, or when it
// was left by an earlier incarnation of the asking process's own Slurm task
// (same job and array task with a lower restart count, or the same job,
// host and pid: a requeued task whose pid was reused).
//
// Taking over is atomic: the stale claim is renamed to a name unique to the
// taker, and only when the renamed file is the very claim judged stale
// (same bytes) is it removed and a new claim linked; a claim taken by
// someone else in between is put back. Of several processes taking over
// one stale claim, one renames it; the others find no claim.json to
// rename and compete, through the exclusive link, with the one that did.
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

	// beforeTakeover, if set, runs between judging a claim stale and
	// taking it over (tests interleave a second claimer there).
	beforeTakeover func()
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

// slurmRestart is SLURM_RESTART_COUNT (0 outside Slurm or when unset).
func slurmRestart() int {
	n, _ := strconv.Atoi(os.Getenv("SLURM_RESTART_COUNT"))
	return max(n, 0)
}

// SlurmJobID names the Slurm job or array task this process runs in ("" outside Slurm).
func SlurmJobID() string {
	if a, t := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID"); a != "" && t != "" {
		return a + "_" + t
	}
	return os.Getenv("SLURM_JOB_ID")
}

// ReadClaim returns the claim of dir and the time of its last heartbeat:
// the file's modification time, or its change time when the modification
// time lies in the future (a holder's clock ahead of this one's; the change
// time is set by the file's server, not by the holder). ok is false when
// there is none.
func ReadClaim(dir string) (info ClaimInfo, heartbeat time.Time, ok bool) {
	info, heartbeat, _, ok = readClaimFile(filepath.Join(dir, ClaimFile))
	return info, heartbeat, ok
}

// readClaimFile reads a claim file: its content, heartbeat and raw bytes,
// all of one file (one open file: a claim replaced meanwhile cannot lend
// its content to another's heartbeat).
func readClaimFile(p string) (info ClaimInfo, heartbeat time.Time, raw []byte, ok bool) {
	f, err := os.Open(p)
	if err != nil {
		return info, heartbeat, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return info, heartbeat, nil, false
	}
	raw, err = io.ReadAll(f)
	if err != nil {
		return info, heartbeat, nil, false
	}
	// An unreadable claim (torn by a crash) still counts: its heartbeat ages.
	_ = json.Unmarshal(raw, &info)
	heartbeat = st.ModTime()
	if heartbeat.After(time.Now()) {
		if ct, ok := changeTime(st); ok {
			heartbeat = ct
		}
	}
	return info, heartbeat, raw, true
}

// Stale reports whether a claim no longer protects its cell, and why.
func (c *Claimer) Stale(info ClaimInfo, heartbeat time.Time) (bool, string) {
	if age := c.now().Sub(heartbeat); age > c.timeout() {
		return true, fmt.Sprintf("heartbeat %s old", age.Round(time.Second))
	}
	host, _ := os.Hostname()
	if info.Host == host && info.PID > 0 && !pidAlive(info.PID) {
		return true, fmt.Sprintf("pid %d is gone", info.PID)
	}
	if job := SlurmJobID(); info.Job != "" && info.Job == job {
		// One Slurm task runs one incarnation at a time; processes of the
		// same incarnation (several suites in one allocation) are told
		// apart by host and pid.
		if info.Restart < slurmRestart() {
			return true, fmt.Sprintf("left by run %d of Slurm task %s (this is run %d)", info.Restart, info.Job, slurmRestart())
		}
		if info.Host == host && info.PID == os.Getpid() {
			return true, fmt.Sprintf("left by an earlier run of Slurm task %s with this pid", info.Job)
		}
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
// live claim is held by someone else. A stale claim is taken over (see
// Claim) and the acquisition retried.
func (c *Claimer) Acquire(dir string) (*Claim, error) {
	host, _ := os.Hostname()
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	info := ClaimInfo{Host: host, PID: os.Getpid(), Since: c.now().UTC().Truncate(time.Second), Job: SlurmJobID(),
		Restart: slurmRestart(), Token: hex.EncodeToString(tok[:])}
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ClaimFile)
	for attempt := 0; attempt < 4; attempt++ {
		won, err := linkExclusive(path, append(b, '\n'), info.Token)
		if err != nil {
			return nil, fmt.Errorf("claim %s: %w", dir, err)
		}
		if won {
			cleanClaimLeftovers(dir)
			cl := &Claim{path: path, info: info, stop: make(chan struct{}), done: make(chan struct{})}
			go cl.heartbeat(c.timeout() / 4)
			return cl, nil
		}
		held, hb, raw, ok := readClaimFile(path)
		if !ok {
			continue // released in between: try again
		}
		if stale, _ := c.Stale(held, hb); !stale {
			return nil, &ClaimedError{Dir: dir, Info: held}
		}
		if c != nil && c.beforeTakeover != nil {
			c.beforeTakeover()
		}
		takeOver(path, raw, info.Token)
	}
	held, _, _ := ReadClaim(dir)
	return nil, &ClaimedError{Dir: dir, Info: held}
}

// takeOver removes the stale claim whose content is stale from path,
// atomically: rename path to a name of this taker's, then check that what
// was renamed is that claim. A different claim (taken by another process
// after the judgement) is linked back unless a third one has appeared.
func takeOver(path string, stale []byte, token string) {
	aside := fmt.Sprintf("%s.%s.stale", path, token)
	if err := os.Rename(path, aside); err != nil {
		return // gone: another process took it over or its holder released it
	}
	got, err := os.ReadFile(aside)
	if err == nil && !bytes.Equal(got, stale) {
		_ = os.Link(aside, path) // not the claim judged stale: put it back
	}
	_ = os.Remove(aside)
}

// cleanClaimLeftovers removes what claimers killed mid-way left in dir:
// temporary claim files (claim.json.TOKEN.tmp) and claims set aside in a
// takeover (claim.json.TOKEN.stale), once older than a minute (a live
// claimer holds them for milliseconds).
func cleanClaimLeftovers(dir string) {
	m, _ := filepath.Glob(filepath.Join(dir, ClaimFile+".*"))
	for _, p := range m {
		if !strings.HasSuffix(p, ".tmp") && !strings.HasSuffix(p, ".stale") {
			continue
		}
		if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) > time.Minute {
			_ = os.Remove(p)
		}
	}
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
			// Refresh only our own claim (one taken over by another process
			// after a stall is theirs).
			if info, _, _, ok := readClaimFile(cl.path); ok && info.Token == cl.info.Token {
				now := time.Now()
				_ = os.Chtimes(cl.path, now, now)
			}
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
