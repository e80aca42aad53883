//go:build unix && !linux

package jit

import "syscall"

// procAttr: its own process group. There is no parent-death signal outside
// Linux; a worker still exits when its stdin reaches EOF, which happens when
// the daemon dies.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// exitedUnreaped: no cheap way to look without reaping here; the pipes and
// Wait tell a little later.
func exitedUnreaped(pid int) bool { return false }
