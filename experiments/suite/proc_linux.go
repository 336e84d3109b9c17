package suite

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childAttr makes the kernel kill a run with SIGKILL when the suite process
// that started it dies (kill -9 included), so no orphaned run keeps writing
// its directory while a restarted suite starts another one there. Linux
// sends the signal when the thread that forked the child exits, so the
// caller keeps that thread locked until the child has been waited for.
func childAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// pidAlive reports whether process pid exists on this host and is not a zombie.
func pidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// linkCount is the number of hard links of fi (0 when unknown).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// changeTime is fi's status-change time (set by the file's server on every
// change, whatever the writer's clock).
func changeTime(fi os.FileInfo) (time.Time, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec), true
	}
	return time.Time{}, false
}
