package lsp

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
)

// teeHandler sends every record to two handlers: the daemon's own log
// (stderr) and the client's window/logMessage.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	if t.a.Enabled(ctx, r.Level) {
		_ = t.a.Handle(ctx, r.Clone())
	}
	if t.b.Enabled(ctx, r.Level) {
		_ = t.b.Handle(ctx, r)
	}
	return nil
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(as), t.b.WithAttrs(as)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{t.a.WithGroup(name), t.b.WithGroup(name)}
}

// forwarder is a slog.Handler that sends records to the client as
// window/logMessage. Records are queued and sent by one goroutine so that
// logging never blocks on the client (which may not be reading); when the
// queue is full, records are dropped (they are on stderr too).
type forwarder struct {
	s     *Server
	min   *slog.LevelVar
	attrs []slog.Attr
	queue chan protocol.LogMessageParams
	done  chan struct{}
	once  *sync.Once
}

func newForwarder(ctx context.Context, s *Server, min *slog.LevelVar) *forwarder {
	f := &forwarder{s: s, min: min, queue: make(chan protocol.LogMessageParams, 256), done: make(chan struct{}), once: &sync.Once{}}
	go f.run(ctx)
	return f
}

func (f *forwarder) run(ctx context.Context) {
	defer close(f.done)
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-f.queue:
			f.s.notify(protocol.MethodWindowLogMessage, &m)
		}
	}
}

// stop waits for the sending goroutine (which ends with the session's
// context).
func (f *forwarder) stop() { <-f.done }

func (f *forwarder) Enabled(_ context.Context, l slog.Level) bool { return l >= f.min.Level() }

func (f *forwarder) Handle(_ context.Context, r slog.Record) error {
	// The specification allows logMessage only once initialize has been
	// answered.
	if f.s.lifecycle() == stateNew {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		if a.Key == "stack" {
			return true // stacks stay on stderr
		}
		b.WriteString(" ")
		b.WriteString(a.Key)
		b.WriteString("=")
		v := a.Value.String()
		if strings.ContainsAny(v, " \t\n\"") {
			v = `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
		}
		b.WriteString(v)
		return true
	}
	for _, a := range f.attrs {
		write(a)
	}
	r.Attrs(write)
	t := protocol.MessageTypeLog
	switch {
	case r.Level >= slog.LevelError:
		t = protocol.MessageTypeError
	case r.Level >= slog.LevelWarn:
		t = protocol.MessageTypeWarning
	case r.Level >= slog.LevelInfo:
		t = protocol.MessageTypeInfo
	}
	select {
	case f.queue <- protocol.LogMessageParams{Type: t, Message: b.String()}:
	default:
	}
	return nil
}

func (f *forwarder) WithAttrs(as []slog.Attr) slog.Handler {
	g := *f
	g.attrs = append(append([]slog.Attr(nil), f.attrs...), as...)
	return &g
}

func (f *forwarder) WithGroup(string) slog.Handler { return f }

// minLevel lets every record through a levelFilter.
const minLevel = slog.Level(-1 << 20)

// levelFilter drops records below a level that can change at run time
// (dfd.logLevel), on top of the wrapped handler's own threshold.
type levelFilter struct {
	h   slog.Handler
	min *slog.LevelVar
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min.Level() && f.h.Enabled(ctx, l)
}

func (f levelFilter) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }

func (f levelFilter) WithAttrs(as []slog.Attr) slog.Handler {
	return levelFilter{f.h.WithAttrs(as), f.min}
}

func (f levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{f.h.WithGroup(name), f.min}
}

// applyLogLevel sets the log thresholds for dfd.logLevel; an empty or
// unknown level restores the defaults.
func (s *Server) applyLogLevel(level string) {
	if l, ok := parseLogLevel(level); ok {
		s.fwdLevel.Set(l)
		s.errLevel.Set(l)
		if s.opts.LogLevel != nil {
			s.opts.LogLevel.Set(l)
		}
		return
	}
	s.fwdLevel.Set(s.opts.ForwardLogLevel)
	s.errLevel.Set(minLevel)
	if s.opts.LogLevel != nil {
		s.opts.LogLevel.Set(s.baseLevel)
	}
}
