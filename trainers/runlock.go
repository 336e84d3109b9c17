//go:build unix

package trainers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the lock's name inside a run directory.
const LockFile = ".lock"

// RunLock is a held run-directory lock; Release gives it back.
type RunLock struct {
	f *os.File
	// Unsupported is set, with the reason, when the file system has no
	// flock (e.g. Lustre mounted without -o flock): the run goes on
	// unlocked rather than not at all.
	Unsupported error
}

// LockRunDir takes the exclusive lock of run directory dir: an flock(2) on
// dir/.lock, which holds one writer per directory across processes and is
// released by the kernel when the holder exits or is killed, so a crash
// never leaves a stale lock behind. The holder's pid is written into the
// file; a second caller gets "run directory DIR is in use by pid N".
func LockRunDir(dir string) (*RunLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock run directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOLCK) {
			return &RunLock{Unsupported: fmt.Errorf("cannot lock run directory %s (%v): make sure no other process writes it", dir, err)}, nil
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(b[:n]))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return nil, fmt.Errorf("run directory %s is in use by pid %s", dir, pid)
		}
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &RunLock{f: f}, nil
}

// Release unlocks (closing the file drops the flock). The file stays:
// removing it could let a third process lock a new file while a second one
// still waits on the old.
func (l *RunLock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
