package cell

import (
	"os/exec"
	"syscall"
)

// childAttr makes the kernel kill the trainer when the dmlbench process
// that started it dies (kill -9 included), so that no orphan keeps
// writing the cell while a rerun starts it again.
func childAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
