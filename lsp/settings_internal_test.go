package lsp

import (
	"log/slog"
	"testing"
)

// Parsing settings is tested in package settings.

func TestParseLogLevel(t *testing.T) {
	for s, want := range map[string]slog.Level{"error": slog.LevelError, "warn": slog.LevelWarn, "Info": slog.LevelInfo, " debug ": slog.LevelDebug} {
		if got, ok := parseLogLevel(s); !ok || got != want {
			t.Errorf("parseLogLevel(%q) = %v, %v", s, got, ok)
		}
	}
	if _, ok := parseLogLevel("trace"); ok {
		t.Error("trace accepted")
	}
}
