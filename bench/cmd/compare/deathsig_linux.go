package main

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal has the kernel send cmd SIGTERM should this
// process die first (a SIGKILL gives it no chance to pass a signal on),
// so that the child still removes its scratch directory.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
