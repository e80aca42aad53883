// Package bqtest runs goccy/bigquery-emulator for integration tests: one
// emulator per test package, started on first use on free loopback ports and
// stopped (with its whole process group) when the package's tests end.
//
//	func TestMain(m *testing.M) { bqtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		emu := bqtest.Shared(t)
//		client := emu.Client(t) // cloud.google.com/go/bigquery, for fixtures
//		…
//	}
//
// The binary is $DFD_BQ_EMULATOR, else the one tools/bqemulator/build.sh
// builds (once, into a cache; minutes the first time). A test that needs the
// emulator fails when it cannot be had: CI must exercise these tests.
// DFD_BQ_EMULATOR=skip skips them instead (for a quick local `go test`).
package bqtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/option"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Project is the project the emulator serves.
const Project = "test"

// Options configure an emulator.
type Options struct {
	// DataYAML is a file for --data-from-yaml (datasets, tables and rows to
	// start with).
	DataYAML string
	// Log receives the emulator's output; nil discards it (it is kept in
	// memory and shown when the emulator fails to start).
	Log io.Writer
}

// Emulator is a running bigquery-emulator.
type Emulator struct {
	// URL is the REST endpoint, e.g. "http://127.0.0.1:41234".
	URL      string
	HTTPPort int
	GRPCPort int

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	out  *syncBuffer
}

// Binary returns the emulator binary: $DFD_BQ_EMULATOR, else the cached
// build from tools/bqemulator/build.sh (built first if need be).
func Binary() (string, error) {
	if p := os.Getenv("DFD_BQ_EMULATOR"); p != "" && p != "skip" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("DFD_BQ_EMULATOR: %w", err)
		}
		return p, nil
	}
	script := filepath.Join(testenv.RepoRoot(), "tools", "bqemulator", "build.sh")
	cmd := exec.Command("bash", script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", script, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// Start starts an emulator and waits until it answers.
func Start(ctx context.Context, opts Options) (*Emulator, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	// Free ports are found by binding and releasing them; another process
	// can take one in between, so a failed start is tried again.
	var lastErr error
	for range 3 {
		e, err := start(ctx, bin, opts)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, bin string, opts Options) (*Emulator, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	e := &Emulator{
		HTTPPort: ports[0],
		GRPCPort: ports[1],
		URL:      "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		done:     make(chan struct{}),
		out:      &syncBuffer{},
	}
	args := []string{
		"--project=" + Project, "--host=127.0.0.1",
		"--port=" + strconv.Itoa(e.HTTPPort), "--grpc-port=" + strconv.Itoa(e.GRPCPort),
		"--log-level=error",
	}
	if opts.DataYAML != "" {
		args = append(args, "--data-from-yaml="+opts.DataYAML)
	}
	e.cmd = exec.Command(bin, args...)
	var w io.Writer = e.out
	if opts.Log != nil {
		w = io.MultiWriter(e.out, opts.Log)
	}
	e.cmd.Stdout, e.cmd.Stderr = w, w
	setProcessGroup(e.cmd)
	if err := e.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start bigquery-emulator: %w", err)
	}
	go func() { // owned by e: ends when the process does, which Stop ensures
		e.cmd.Wait()
		close(e.done)
	}()
	if err := e.waitReady(ctx, 60*time.Second); err != nil {
		e.Stop()
		return nil, fmt.Errorf("bigquery-emulator on port %d: %w\n%s", e.HTTPPort, err, e.out.String())
	}
	return e, nil
}

func (e *Emulator) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	url := e.URL + "/projects/" + Project + "/datasets"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-e.done:
			return errors.New("exited before it was ready")
		case <-ctx.Done():
			return errors.New("not ready in time")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills the emulator and its process group and waits for it to exit.
func (e *Emulator) Stop() {
	if e == nil || e.cmd == nil || e.cmd.Process == nil {
		return
	}
	killGroup(e.cmd)
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
	}
}

// Output is what the emulator printed so far.
func (e *Emulator) Output() string { return e.out.String() }

// ClientOptions point a Google API client at the emulator.
func (e *Emulator) ClientOptions() []option.ClientOption {
	return []option.ClientOption{option.WithEndpoint(e.URL), option.WithoutAuthentication()}
}

// Client is a cloud.google.com/go/bigquery client of the emulator's
// project, closed when the test ends. Tests use it to make fixtures and to
// read back what dfd did, independently of dfd's own adapter.
func (e *Emulator) Client(t testing.TB) *bigquery.Client {
	t.Helper()
	c, err := bigquery.NewClient(context.Background(), Project, e.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var (
	sharedMu  sync.Mutex
	shared    *Emulator
	sharedErr error
)

// Shared returns the package's emulator, starting it on first use. Call
// Main from TestMain so it is stopped at the end.
func Shared(t testing.TB) *Emulator {
	t.Helper()
	if os.Getenv("DFD_BQ_EMULATOR") == "skip" {
		t.Skip("DFD_BQ_EMULATOR=skip")
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start(context.Background(), Options{})
	}
	if sharedErr != nil {
		t.Fatalf("BigQuery emulator: %v", sharedErr)
	}
	return shared
}

// Main runs the package's tests and stops the shared emulator afterwards.
func Main(m *testing.M) {
	code := m.Run()
	sharedMu.Lock()
	shared.Stop()
	sharedMu.Unlock()
	os.Exit(code)
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 { // keep memory bounded; the start matters most
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
