//go:build !linux

package suite

import (
	"os"
	"os/exec"
	"time"
)

// childAttr: outside Linux there is no parent-death signal; a killed suite
// may leave its running child behind.
func childAttr(cmd *exec.Cmd) {}

// pidAlive cannot tell here: a claim then goes stale only by its timeout.
func pidAlive(pid int) bool { return true }

// linkCount is unknown here.
func linkCount(fi os.FileInfo) uint64 { return 0 }

// changeTime is unknown here: a heartbeat in the future (a holder's clock
// ahead) then holds until this clock passes it by the timeout.
func changeTime(fi os.FileInfo) (time.Time, bool) { return time.Time{}, false }
