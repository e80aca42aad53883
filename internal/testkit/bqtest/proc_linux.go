package bqtest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the emulator in its own process group, so Stop can
// kill it with anything it started, and asks the kernel to kill it if the
// test binary dies first (a crashed or killed `go test` must not leave
// emulators behind).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
