package bqtest

import (
	"context"
	"syscall"
	"testing"
	"time"
)

func TestStartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the BigQuery emulator")
	}
	e, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.Client(t)
	if err := c.Dataset("d").Create(context.Background(), nil); err != nil {
		t.Fatalf("emulator not answering: %v\n%s", err, e.Output())
	}
	pid := e.cmd.Process.Pid
	e.Stop()
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
		t.Fatal("emulator still running after Stop")
	}
	if err := syscall.Kill(-pid, 0); err == nil {
		t.Error("process group still alive")
	}
	e.Stop() // twice is fine
}
