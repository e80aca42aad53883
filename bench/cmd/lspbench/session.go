//go:build linux

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
)

// session is a `dfd serve` subprocess driven by a fake editor, for the
// -mode requests and -mode diagnostics measurements.
type session struct {
	ed     *fakeeditor.Editor
	cmd    *exec.Cmd
	stderr string
}

// startSession starts `dfd serve serveArgs…`; settings (nil: none, so the
// server's defaults apply) are sent as initializationOptions and answered
// to workspace/configuration; env (KEY=value) is added to this process's
// environment.
func startSession(ctx context.Context, dfd string, serveArgs []string, settings map[string]any, env ...string) (*session, error) {
	cmd := exec.Command(dfd, append([]string{"serve"}, serveArgs...)...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := os.CreateTemp("", "lspbench-stderr-*")
	if err != nil {
		return nil, err
	}
	_ = stderr.Close()
	f, err := os.OpenFile(stderr.Name(), os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting dfd serve: %w", err)
	}
	_ = f.Close()
	cfg := fakeeditor.Config{}
	if settings != nil {
		cfg.InitializationOptions = map[string]any{"dfd": settings}
		cfg.Configuration = settings
	}
	return &session{ed: fakeeditor.New(ctx, pipes{stdout, stdin}, cfg), cmd: cmd, stderr: stderr.Name()}, nil
}

// close ends the session: shutdown and exit, then the process (killed if
// it lingers).
func (s *session) close(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = s.ed.Shutdown(sctx)
	_ = s.ed.Exit(sctx)
	cancel()
	_ = s.ed.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	_ = os.Remove(s.stderr)
}

// fail adds the last lines of the daemon's stderr to err.
func (s *session) fail(err error) error {
	b, _ := os.ReadFile(s.stderr)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return fmt.Errorf("%w\ndfd serve stderr (last lines):\n%s", err, strings.Join(lines[max(0, len(lines)-30):], "\n"))
}

// open initializes the session on root and waits for the first compile.
func (s *session) open(ctx context.Context, root string) (time.Duration, error) {
	start := time.Now()
	if _, err := s.ed.Initialize(ctx, root); err != nil {
		return 0, s.fail(fmt.Errorf("initialize: %w", err))
	}
	if err := s.ed.Await(ctx, "first compile", func(st *fakeeditor.State) bool { return len(st.PreviewChanged) > 0 }); err != nil {
		return 0, s.fail(err)
	}
	return time.Since(start), nil
}

// Percentiles are nearest-rank percentiles of samples in milliseconds.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

func percentiles(samples []float64) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	v := append([]float64(nil), samples...)
	sort.Float64s(v)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(v)))) - 1
		return v[max(0, min(i, len(v)-1))]
	}
	return Percentiles{N: len(v), P50: rank(50), P95: rank(95), Max: v[len(v)-1]}
}
