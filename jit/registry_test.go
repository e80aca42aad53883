package jit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
)

// TestPoolsAcquireWorkers: a project reopened with the same core takes its
// new reference to the pool before it releases the old one, and the same
// warm worker serves it; the last release ends the workers.
func TestPoolsAcquireWorkers(t *testing.T) {
	root := workertest.Project(t, nil)
	r := jit.NewPools(jit.PoolOptions{Workers: 1, Command: gojaWorkers.Command(t, "", ""), Env: gojaWorkers.Env, Logger: workertest.Logger(t)})
	defer r.Close()
	k := jit.Key{Root: root, BundlePath: workertest.BundlePath(root), CoreVersion: testenv.CoreVersion}
	old, releaseOld, err := r.Acquire(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := old.Workers()[0].PID

	p, release, err := r.Acquire(k)
	if err != nil {
		t.Fatal(err)
	}
	releaseOld()
	res, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.PID != pid {
		t.Errorf("served by worker %d, want the warm worker %d", res.Stats.PID, pid)
	}

	release()
	if _, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil); !errors.Is(err, jit.ErrClosed) {
		t.Errorf("after the last release: err = %v, want ErrClosed", err)
	}
	if kids := workertest.Children(); len(kids) > 0 {
		t.Errorf("processes left after the last release: %v", kids)
	}
}
