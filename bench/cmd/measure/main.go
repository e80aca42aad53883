//go:build linux

// Command measure runs a command and reports its wall time, CPU time and
// peak memory, counting every process it starts, including ones that are
// orphaned (Linux only).
//
//	measure [-o FILE] -- COMMAND [ARG...]
//
// It writes one line "<wall seconds> <peak RSS KiB> <CPU seconds>" to FILE
// (default stderr) and exits with the command's status. The command's
// stdin, stdout and stderr are its own.
//
// Why not GNU time: the official Dataform CLI compiles in a worker process
// that it kills with SIGKILL and never waits for, so the worker's CPU time
// and memory never reach the CLI's rusage, and `time` reports the thin
// parent only. measure makes itself a child subreaper: orphans are
// reparented to it and it reaps them, adding their CPU time; it also
// samples the summed RSS of the whole process tree, because the CLI's two
// processes are alive at once.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sampleEvery trades precision of the summed peak for the CPU the sampling
// takes from the measured processes on a small machine.
const sampleEvery = 25 * time.Millisecond

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// usage is what measure reports.
type usage struct {
	Wall   time.Duration // until the command itself exits
	CPU    time.Duration // user + system of the command and all descendants
	PeakKB int64         // max of the sampled tree sum and each process's own peak
}

func main() {
	out := flag.String("o", "", "write the measurement to this file instead of stderr")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: measure [-o FILE] -- COMMAND [ARG...]")
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	u, code, err := run(flag.Args(), os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(127)
	}
	line := fmt.Sprintf("%.3f %d %.3f\n", u.Wall.Seconds(), u.PeakKB, u.CPU.Seconds())
	if *out == "" {
		fmt.Fprint(os.Stderr, line)
	} else if err := os.WriteFile(*out, []byte(line), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(127)
	}
	os.Exit(code)
}

// run runs args and returns its usage and exit status. It must be the only
// thing in the process that starts children: it reaps any child at the end.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (usage, int, error) {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return usage{}, 0, fmt.Errorf("becoming a child subreaper: %w", errno)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return usage{}, 0, err
	}
	stop := make(chan struct{})
	peak := make(chan int64)
	go func() { peak <- sampleTree(os.Getpid(), stop) }()
	err := cmd.Wait()
	wall := time.Since(start)
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
		if code < 0 { // killed by a signal, as a shell reports it
			if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
	case err != nil:
		return usage{}, 0, err
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	u := usage{Wall: wall}
	if ru != nil {
		// Maxrss of the direct child also includes this process's own
		// high-water mark (Go starts children with CLONE_VM, and exec
		// records the old mm's peak); this process stays small.
		u.CPU = cpu(ru)
		u.PeakKB = ru.Maxrss
	}
	// Orphans (the CLI's killed worker) are ours now; wait for all of them.
	for {
		var ws syscall.WaitStatus
		var oru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, 0, &oru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			break // ECHILD: none left
		}
		u.CPU += cpu(&oru)
		u.PeakKB = max(u.PeakKB, oru.Maxrss)
	}
	close(stop)
	u.PeakKB = max(u.PeakKB, <-peak)
	return u, code, nil
}

func cpu(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sampleTree returns the largest summed RSS (KiB) of root's descendants
// seen until stop is closed.
func sampleTree(root int, stop <-chan struct{}) int64 {
	page := int64(os.Getpagesize()) / 1024
	var peak int64
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		var sum int64
		for _, pid := range descendants(root) {
			sum += residentPages(pid) * page
		}
		peak = max(peak, sum)
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}

// descendants lists root's descendant processes (not root itself).
func descendants(root int) []int {
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children(pid) {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// children reads /proc/<pid>/task/*/children: any thread may have forked.
func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process or thread is gone
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func residentPages(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n
}
