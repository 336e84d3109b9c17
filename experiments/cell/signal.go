package cell

import (
	"fmt"
	"syscall"
)

// signalNames are the signals a trainer is commonly killed by.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
}

// signalName names sig in a message: "SIGKILL (signal 9)". Go's own
// String is a description ("killed"), which would read "killed by signal
// killed".
func signalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return fmt.Sprintf("%s (signal %d)", n, int(sig))
	}
	return fmt.Sprintf("signal %d", int(sig))
}
