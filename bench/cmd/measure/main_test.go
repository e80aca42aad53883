//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	roleEnv     = "MEASURE_TEST_ROLE"
	orphanMiB   = 200
	orphanSleep = 1500 * time.Millisecond
)

// TestMain lets the test binary play the processes being measured: an
// "orphaner" that starts an "alloc" child and exits without waiting for it,
// as the Dataform CLI does with its compile worker.
func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "alloc":
		b := make([]byte, orphanMiB<<20)
		for i := range len(b) / 4096 {
			b[i*4096] = 1 // touch every page so it is resident
		}
		time.Sleep(orphanSleep)
		os.Exit(int(b[0]) - 1)
	case "orphaner":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"=alloc")
		if err := cmd.Start(); err != nil {
			os.Exit(100)
		}
		time.Sleep(100 * time.Millisecond)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestRunCountsOrphans(t *testing.T) {
	t.Setenv(roleEnv, "orphaner")
	u, code, err := run([]string{os.Args[0]}, nil, os.Stdout, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 {
		t.Errorf("exit status %d, want the command's 3", code)
	}
	if u.PeakKB < orphanMiB<<10 {
		t.Errorf("peak %d KiB, want at least the orphan's %d MiB", u.PeakKB, orphanMiB)
	}
	if u.CPU <= 0 {
		t.Errorf("CPU time %v", u.CPU)
	}
	// Wall time ends with the command, not with its orphans.
	if u.Wall >= orphanSleep {
		t.Errorf("wall %v includes the orphan's lifetime (%v)", u.Wall, orphanSleep)
	}
	// Nothing is left to reap.
	if _, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); err != syscall.ECHILD {
		t.Errorf("children left after run: wait4 = %v", err)
	}
}

func TestRunPassesOutputAndStatus(t *testing.T) {
	var out bytes.Buffer
	u, code, err := run([]string{"sh", "-c", "echo hello; exit 7"}, nil, &out, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if code != 7 || strings.TrimSpace(out.String()) != "hello" {
		t.Errorf("status %d, output %q", code, out.String())
	}
	if u.Wall <= 0 || u.PeakKB <= 0 {
		t.Errorf("usage %+v", u)
	}
	if _, _, err := run([]string{"/nonexistent/command"}, nil, &out, os.Stderr); err == nil {
		t.Error("a missing command was not reported")
	}
}
