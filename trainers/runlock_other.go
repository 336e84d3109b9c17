//go:build !unix

package trainers

// RunLock is a no-op on systems without flock(2).
type RunLock struct {
	Unsupported error // always nil here: nothing to warn about per directory
}

// LockRunDir does nothing where flock(2) is unavailable: one writer per run
// directory is then the user's care.
func LockRunDir(dir string) (*RunLock, error) { return &RunLock{}, nil }

// Release does nothing.
func (l *RunLock) Release() {}
