//go:build !linux

package cell

import "os/exec"

// childAttr: only Linux has a parent-death signal.
func childAttr(*exec.Cmd) {}
