//go:build !unix

package project

import (
	"context"
	"os/exec"
	"sync"
)

// Without flock only installs within this process are serialised; install
// tolerates losing a cross-process race (see the rename fallback).
var locks sync.Map // path -> chan struct{} (a one-slot semaphore)

func lockFile(ctx context.Context, path string, onWait func()) (unlock func(), err error) {
	v, _ := locks.LoadOrStore(path, make(chan struct{}, 1))
	sem := v.(chan struct{})
	select {
	case sem <- struct{}{}:
	default:
		onWait()
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return func() { <-sem }, nil
}

func killProcessGroup(cmd *exec.Cmd) {}
