//go:build !unix

package jit

import "syscall"

// procAttr: nothing portable; a worker exits when its stdin reaches EOF.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup: the caller also kills the process itself.
func killGroup(pid int) {}

// exitedUnreaped: no cheap way to look without reaping here; the pipes and
// Wait tell a little later.
func exitedUnreaped(pid int) bool { return false }
