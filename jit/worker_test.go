package jit_test

import (
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/workertest"
)

// TestWorkerProtocol: the goja worker speaks the protocol, and exits soon
// after stdin's EOF even while native code it cannot interrupt runs.
func TestWorkerProtocol(t *testing.T) {
	root := workertest.Project(t, nil)
	workertest.Protocol(t, gojaWorkers, root)

	t.Run("stdin EOF in native code", func(t *testing.T) {
		rw := gojaWorkers.StartRaw(t, root)
		rw.Send(t, workertest.JitRequest(1, workertest.JitCatastrophicRegexp))
		time.Sleep(200 * time.Millisecond)
		rw.In.Close()
		start := time.Now()
		rw.Exit(t)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("exited %s after stdin's EOF", d)
		}
	})
}
