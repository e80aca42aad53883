package lsp

import (
	"log/slog"
	"testing"
)

// dfd.logLevel sets the forwarding threshold, the stderr filter and the
// daemon's level variable; removing it restores them.
func TestApplyLogLevel(t *testing.T) {
	lv := new(slog.LevelVar)
	lv.Set(slog.LevelInfo)
	s := &Server{opts: Options{LogLevel: lv, ForwardLogLevel: slog.LevelInfo}, baseLevel: slog.LevelInfo}
	s.fwdLevel.Set(slog.LevelInfo)
	s.errLevel.Set(minLevel)
	s.applyLogLevel("debug")
	if lv.Level() != slog.LevelDebug || s.fwdLevel.Level() != slog.LevelDebug || s.errLevel.Level() != slog.LevelDebug {
		t.Errorf("debug: %v %v %v", lv.Level(), s.fwdLevel.Level(), s.errLevel.Level())
	}
	s.applyLogLevel("error")
	if lv.Level() != slog.LevelError || s.fwdLevel.Level() != slog.LevelError {
		t.Errorf("error: %v %v", lv.Level(), s.fwdLevel.Level())
	}
	f := levelFilter{slog.DiscardHandler, &s.errLevel}
	if f.Enabled(t.Context(), slog.LevelWarn) {
		t.Error("warn passes an error filter")
	}
	s.applyLogLevel("")
	if lv.Level() != slog.LevelInfo || s.fwdLevel.Level() != slog.LevelInfo || s.errLevel.Level() != minLevel {
		t.Errorf("reset: %v %v %v", lv.Level(), s.fwdLevel.Level(), s.errLevel.Level())
	}
}
