//go:build unix

package project

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on path, which works across processes
// and, because each call opens its own file description, across goroutines
// of one process too. flock(2) cannot be interrupted by a context, so it is
// polled non-blockingly; onWait is called once if the lock is busy. The lock
// file is never removed: unlinking a flock file lets two holders coexist.
func lockFile(ctx context.Context, path string, onWait func()) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	waited := false
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(fd, syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, err
		}
		if !waited {
			waited = true
			onWait()
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// killProcessGroup makes cancelling cmd's context kill cmd and everything it
// started: npm runs its work in child processes that would otherwise
// outlive it and keep writing into a directory we are about to delete.
func killProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
