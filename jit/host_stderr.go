package jit

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// stderrLines is how many of a worker's last stderr lines are kept for the
// error of a request it crashed on.
const stderrLines = 50

// stderrLog re-logs a worker's stderr under its name (as go-plugin does)
// and keeps the last lines for crash reports.
type stderrLog struct {
	log *slog.Logger

	mu    sync.Mutex // guards lines and next
	lines []string   // ring of at most stderrLines
	next  int
	done  chan struct{} // closed when the stream ended
}

func newStderrLog(log *slog.Logger) *stderrLog {
	return &stderrLog{log: log, done: make(chan struct{})}
}

// copy reads r to its end. The worker's owner runs it on a goroutine it
// waits for; it ends when the worker's stderr is closed (the worker exited).
func (s *stderrLog) copy(r io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		s.add(line)
		level, msg := lineLevel(line)
		s.log.Log(context.Background(), level, msg)
	}
	// A line longer than 1 MiB ends the scanner; drain the rest so the
	// worker never blocks on a full stderr pipe.
	_, _ = io.Copy(io.Discard, r)
}

func (s *stderrLog) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) < stderrLines {
		s.lines = append(s.lines, line)
		return
	}
	s.lines[s.next] = line
	s.next = (s.next + 1) % stderrLines
}

// last returns the kept lines, oldest first.
func (s *stderrLog) last() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.lines))
	out = append(out, s.lines[s.next:]...)
	return append(out, s.lines[:s.next]...)
}

// lineLevel picks the level to re-log a line at, dropping the level from
// the worker's own log records: Go panics and fatal errors, and the
// worker's error records, are errors.
func lineLevel(line string) (slog.Level, string) {
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		if rest, ok := strings.CutPrefix(line, "level="+l.String()+" "); ok {
			return l, rest
		}
	}
	if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") {
		return slog.LevelError, line
	}
	return slog.LevelInfo, line
}
