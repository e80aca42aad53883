package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// signalBound is how long the tests give a signalled dfd to end. dfd's
// own bound is 1 s (signalGrace, 750 ms, and the exit); the margin is
// for a loaded machine.
const signalBound = 5 * time.Second

// buildDFD builds the dfd binary, whose main() (signal handling included)
// the test binary does not run.
func buildDFD(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dfd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/dfd")
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// children are the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so after the last ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, c)
		}
	}
	return out
}

// alive reports whether pid is a process that has not exited (a zombie
// has exited).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// signalAndWait sends sig to the started cmd and waits for it: its exit
// status and how long it took. Worker processes it had started must be
// gone too.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	kids := children(cmd.Process.Pid)
	done := make(chan error, 1)
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(4 * signalBound): // then kill it, and fail below
		_ = cmd.Process.Kill()
		<-done
	}
	took := time.Since(start)
	if took > signalBound {
		t.Errorf("%s: dfd took %s to end (bound %s)", sig, took.Round(time.Millisecond), signalBound)
	}
	for _, k := range kids {
		deadline := time.Now().Add(signalBound)
		for alive(k) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(k) {
			t.Errorf("child process %d outlived dfd", k)
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
	}
	t.Logf("%s: ended in %s with status %d; %d child process(es) gone", sig, took.Round(time.Millisecond), cmd.ProcessState.ExitCode(), len(kids))
	return cmd.ProcessState.ExitCode(), took
}

// waitFor polls cond until it holds or the bound passes.
func waitFor(t *testing.T, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SIGTERM and SIGINT end dfd within a second whatever it is blocked on:
// a write(2) to a full pipe nobody reads (no context reaches it: the
// process exits after the grace with 128+signal), an endless loop in
// JavaScript on either engine (the cancelled context stops it), and
// `dfd serve` waiting for its editor.
func TestSignalEndsCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dfd")
	}
	bin := buildDFD(t)
	dir := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("blocked writing the graph/"+sig.String(), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// The smallest pipe (a page): the graph fills it and the
			// write blocks until someone reads, which no one does.
			size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), syscall.F_SETPIPE_SZ, 4096)
			if errno != 0 {
				t.Fatalf("F_SETPIPE_SZ: %v", errno)
			}
			cmd := exec.Command(bin, "compile", dir, "--json")
			cmd.Stdout = w
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			waitFor(t, "the pipe full", 2*time.Minute, func() bool {
				var n int32
				_, _, e := syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
				return e == 0 && uintptr(n) >= size
			})
			if !alive(cmd.Process.Pid) {
				t.Fatalf("dfd ended with its output unread:\n%s", stderr.Bytes())
			}
			code, _ := signalAndWait(t, cmd, sig)
			if want := 128 + int(sig); code != want {
				t.Errorf("exit status %d, want %d (killed by the signal after the grace)\n%s", code, want, stderr.Bytes())
			}
		})
	}

	loop := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	js := "console.log(\"looping\");\nwhile (true) {}\n"
	if err := os.WriteFile(filepath.Join(loop, "definitions", "loop.js"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"goja", "node"} {
		t.Run("endless JavaScript/"+engine, func(t *testing.T) {
			if engine == "node" {
				needNode(t)
			}
			cmd := exec.Command(bin, "compile", loop, "--json", "--engine", engine, "--timeout", "1h")
			var stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the loop running", 2*time.Minute, func() bool { return strings.Contains(string(stderr.Bytes()), "looping") })
			code, _ := signalAndWait(t, cmd, syscall.SIGTERM)
			if code == 0 {
				t.Errorf("exit status 0 after an interrupted compile\n%s", stderr.Bytes())
			}
		})
	}

	t.Run("serve", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close() // the editor holds its end open: no EOF
		cmd := exec.Command(bin, "serve", "-v")
		cmd.Stdin = r
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		// An initialize request, so that the server is up and reading.
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
		if _, err := w.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if !alive(cmd.Process.Pid) {
			t.Fatalf("dfd serve ended before the signal:\n%s", stderr.Bytes())
		}
		signalAndWait(t, cmd, syscall.SIGTERM)
	})
}

// exitOnSignal: the signal cancels the context at once; exit is called
// with 128+signal only when the command has not returned within the grace
// (or at a second signal), never once stop was called.
func TestExitOnSignal(t *testing.T) {
	for _, tc := range []struct {
		name      string
		returnsIn time.Duration // when the command returns after the signal; 0: never
		second    bool          // a second signal right after the first
		wantExit  int
		grace     time.Duration
		signal    syscall.Signal
	}{
		{name: "returns within the grace", returnsIn: 10 * time.Millisecond, grace: time.Minute, signal: syscall.SIGTERM},
		{name: "blocked past the grace", grace: 50 * time.Millisecond, signal: syscall.SIGTERM, wantExit: 143},
		{name: "blocked, SIGINT", grace: 50 * time.Millisecond, signal: syscall.SIGINT, wantExit: 130},
		{name: "second signal", second: true, grace: time.Hour, signal: syscall.SIGINT, wantExit: 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			exited := make(chan int, 1)
			stop := exitOnSignal(cancel, tc.grace, func(code int) { exited <- code })
			if err := syscall.Kill(os.Getpid(), tc.signal); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the signal did not cancel the context")
			}
			if tc.second {
				if err := syscall.Kill(os.Getpid(), tc.signal); err != nil {
					t.Fatal(err)
				}
			}
			if tc.returnsIn > 0 {
				time.Sleep(tc.returnsIn)
				stop()
				select {
				case code := <-exited:
					t.Fatalf("exit(%d) called for a command that returned", code)
				default:
				}
				return
			}
			select {
			case code := <-exited:
				if code != tc.wantExit {
					t.Errorf("exit(%d), want exit(%d)", code, tc.wantExit)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("exit not called")
			}
			// The goroutine ends after exit returns (here it does); stop
			// must not hang.
			stop()
		})
	}
}
