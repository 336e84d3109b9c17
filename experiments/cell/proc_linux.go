package cell

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// childAttr puts the command in a process group of its own, whose id is
// its pid, so that everything it starts (a launcher's interpreter,
// torchrun's workers, a background logger) can be signalled together;
// and makes the kernel kill the command when the thread that started it
// dies (kill -9 of dmlbench included).
func childAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// signalGroup sends sig to every process of the command's group.
func signalGroup(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

// guard is a process that kills the command's group when dmlbench dies
// without sweeping it. The parent-death signal reaches the command alone;
// the processes it started would live on, re-parented to init, and a
// rerun would start a second trainer in the same directory. The guard is
// /bin/sh blocked on a pipe whose write end only this process holds: when
// this process dies, however, the read returns end-of-file and the guard
// kills the group. It is in a group of its own and ignores the terminal's
// signals, so Ctrl-C reaches dmlbench, which stops the command itself.
type guard struct {
	cmd *exec.Cmd
	w   *os.File
}

// startGuard starts the guard of group pgid; nil when it cannot (no
// /bin/sh): the command then has its parent-death signal alone.
func startGuard(pgid int) *guard {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", `trap '' INT TERM HUP QUIT; read x; [ "$x" = done ] || kill -9 -"$1" 2>/dev/null`, "dmlbench-guard", strconv.Itoa(pgid))
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil
	}
	return &guard{cmd: cmd, w: w}
}

// release tells the guard the group was swept and waits for it to exit.
func (g *guard) release() {
	if g == nil {
		return
	}
	_, _ = g.w.Write([]byte("done\n"))
	g.w.Close()
	_ = g.cmd.Wait()
}
