//go:build !linux

package main

import "os/exec"

// setParentDeathSignal does nothing here: only Linux offers a parent
// death signal.
func setParentDeathSignal(cmd *exec.Cmd) {}
