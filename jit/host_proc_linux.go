package jit

import "syscall"

// procAttr: its own process group (so the whole group can be killed and a
// terminal's Ctrl-C does not reach workers behind the daemon's back), and
// SIGKILL when the daemon dies (see host_spawn.go for the thread caveat).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
