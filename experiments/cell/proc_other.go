//go:build !linux

package cell

import (
	"os"
	"os/exec"
	"syscall"
)

// childAttr: only Linux has a parent-death signal and the guard.
func childAttr(*exec.Cmd) {}

// signalGroup signals the command alone outside Linux.
func signalGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(sig)
	}
}

type guard struct{}

func startGuard(int) *guard { return nil }

func (g *guard) release() {}
