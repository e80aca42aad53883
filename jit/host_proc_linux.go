package jit

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procAttr: its own process group (so the whole group can be killed and a
// terminal's Ctrl-C does not reach workers behind the daemon's back), and
// SIGKILL when the daemon dies (see host_spawn.go for the thread caveat).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// exitedUnreaped reports whether pid has exited but not been reaped yet.
// A worker killed from outside stays such a zombie until its Wait returns,
// and until then its pipes may still look open: handing it a request would
// fail that request for nothing.
func exitedUnreaped(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // gone (reaped) or unreadable: the other checks decide
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain ") ".
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}
