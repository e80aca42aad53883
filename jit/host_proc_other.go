//go:build !unix

package jit

import "syscall"

// procAttr: nothing portable; a worker exits when its stdin reaches EOF.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup: the caller also kills the process itself.
func killGroup(pid int) {}
