package jit

import (
	"os/exec"
	"runtime"
	"sync"
)

// Worker processes are started from one goroutine locked to its OS thread
// for the life of the daemon.
//
// Why: on Linux a worker gets SysProcAttr.Pdeathsig = SIGKILL so that it
// dies with the daemon even when the daemon is killed before it can close
// the worker's stdin. The kernel ties that signal to the *thread* that
// forked the child, not to the process: when that thread exits, the child
// is killed. The Go runtime ends an OS thread when a goroutine that locked
// it returns without unlocking (some libraries do that), so a worker forked
// from an arbitrary thread could be killed at a random moment. Forking
// from a thread that is locked by a goroutine that never returns rules
// that out. This goroutine deliberately has no stop: ending it would kill
// every worker it started.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startCmd starts cmd on the spawner thread.
func startCmd(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread()
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}
