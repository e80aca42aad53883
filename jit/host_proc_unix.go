//go:build unix && !linux

package jit

import "syscall"

// procAttr: its own process group. There is no parent-death signal outside
// Linux; a worker still exits when its stdin reaches EOF, which happens when
// the daemon dies.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
