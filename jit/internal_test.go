package jit

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestWorkerEnv(t *testing.T) {
	env := workerEnv([]string{
		"PATH=/usr/bin", "HOME=/home/u", "GOOGLE_APPLICATION_CREDENTIALS=/k.json",
		"CLOUDSDK_CONFIG=/c", "HTTPS_PROXY=http://p", "GITHUB_TOKEN=t", "LANG=C.UTF-8", "PATHEXT=x",
	}, []string{"GOGC=200"})
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "GOGC=200"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("workerEnv = %q, want %q", env, want)
	}
}

func TestStderrRing(t *testing.T) {
	s := newStderrLog(slog.New(slog.DiscardHandler))
	var in strings.Builder
	for i := 1; i <= stderrLines+7; i++ {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	s.copy(strings.NewReader(in.String()))
	got := s.last()
	if len(got) != stderrLines || got[0] != "line 8" || got[len(got)-1] != fmt.Sprintf("line %d", stderrLines+7) {
		t.Errorf("kept %d lines, %q … %q", len(got), got[0], got[len(got)-1])
	}
}

func TestLineLevel(t *testing.T) {
	for line, want := range map[string]slog.Level{
		`level=WARN msg="heap ceiling crossed"`: slog.LevelWarn,
		`level=ERROR msg=x`:                     slog.LevelError,
		"panic: runtime error":                  slog.LevelError,
		"fatal error: out of memory":            slog.LevelError,
		"something else":                        slog.LevelInfo,
	} {
		if got, msg := lineLevel(line); got != want || strings.HasPrefix(msg, "level=") {
			t.Errorf("lineLevel(%q) = %v, %q; want %v", line, got, msg, want)
		}
	}
}

func TestWorkerArgsRoundTrip(t *testing.T) {
	in := WorkerOptions{BundlePath: "/p/b.js", CoreVersion: "3.0.62", Root: "/p", MemoryLimit: 1 << 30, GCPercent: 200, MaxFrame: 1 << 20, Spares: 3}
	out, err := ParseWorkerArgs(WorkerArgs(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
	if _, err := ParseWorkerArgs([]string{"--root=/p"}, new(strings.Builder)); err == nil {
		t.Error("missing --bundle accepted")
	}
}
