//go:build !linux

package suite

import (
	"os"
	"os/exec"
)

// childAttr: outside Linux there is no parent-death signal; a killed suite
// may leave its running child behind.
func childAttr(cmd *exec.Cmd) {}

// pidAlive cannot tell here: a claim then goes stale only by its timeout.
func pidAlive(pid int) bool { return true }

// linkCount is unknown here.
func linkCount(fi os.FileInfo) uint64 { return 0 }
