package lsp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dfdtools/dfd/workspace"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// DefaultDebounce is the as-you-type debounce (workspace.DefaultDebounce):
// edits typed faster than it recompile once they stop; the first edit after
// a pause, and a save, compile at once.
const DefaultDebounce = workspace.DefaultDebounce

// Options configure a server.
type Options struct {
	Name, Version string
	// Log receives the server's log (Serve also forwards it to the client's
	// window/logMessage). Nil discards it.
	Log *slog.Logger
	// MaxMessageBytes bounds incoming messages (default
	// DefaultMaxMessageBytes).
	MaxMessageBytes int
	// Debounce is the as-you-type compile delay (default DefaultDebounce).
	Debounce time.Duration
	// ForwardLogLevel is the lowest level forwarded to window/logMessage
	// (default slog.LevelInfo) unless dfd.logLevel says otherwise.
	ForwardLogLevel slog.Level
	// LogLevel, when set, is the level variable of Log's handler: the
	// server sets it to dfd.logLevel (and back to its first value when the
	// setting is removed), so that the setting can make Log more verbose.
	// Without it the setting can only make Log quieter.
	LogLevel *slog.LevelVar
}

type lifecycleState int

const (
	stateNew lifecycleState = iota
	stateInitialized
	stateShutdown
)

// Server is one LSP session with one client.
type Server struct {
	protocol.UnimplementedServer

	ws     *workspace.Session
	conn   jsonrpc2.Conn
	client protocol.Client
	opts   Options
	log    *slog.Logger

	// ctx ends when the session ends (exit, stdin closed, Serve's ctx
	// cancelled); background work derives from it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines started by handlers

	mu          sync.Mutex // guards state, caps, exitCode, initFolders
	state       lifecycleState
	caps        clientCaps
	exitCode    int
	initFolders []string // the folders of initialize, until initialized starts them

	// Settings payloads are numbered as they are asked for (pushed or
	// pulled) and applied in that order; settingsMu serialises applying.
	settingsGen     atomic.Int64
	settingsMu      sync.Mutex // guards settingsApplied
	settingsApplied int64

	exitOnce sync.Once
	exited   chan struct{} // closed by the exit notification

	diags diagnosticsState

	// Log thresholds (dfd.logLevel): fwdLevel for window/logMessage,
	// errLevel filters Log (stderr) on top of its handler's own level;
	// baseLevel is Options.LogLevel's first value.
	fwdLevel, errLevel slog.LevelVar
	baseLevel          slog.Level

	progressSeq         atomic.Int64
	invariantViolations atomic.Int64 // panics and impossible states, reported not crashed
}

// recovered runs f, turning a panic (a bug in a backend) into an error so
// that one bad request never takes the daemon down.
func (s *Server) recovered(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.invariantViolations.Add(1)
			s.log.Error("panic in "+what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = fmt.Errorf("dfd internal error in %s: %v (please report this)", what, v)
		}
	}()
	return f()
}

// invariants counts the server's and the workspace's.
func (s *Server) invariants() int64 {
	return s.invariantViolations.Load() + s.ws.InvariantViolations()
}

// clientCaps are the client capabilities the server acts on.
type clientCaps struct {
	workDoneProgress     bool
	watchFilesDynamic    bool
	watchRelativePattern bool
	configuration        bool
	markdownHover        bool
	codeLensRefresh      bool     // workspace/codeLens/refresh (cost figures arrive after the compile)
	edits                editCaps // workspace edits (edits.go)
}

// Serve runs an LSP session over rwc until the client sends exit, closes
// the connection, or ctx ends. It returns the process exit code the LSP
// specification asks for: 0 after shutdown + exit, 1 otherwise.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, backend workspace.Backend, opts Options) int {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Name == "" {
		opts.Name = "dfd"
	}
	base := opts.Log
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &Server{
		opts:     opts,
		ctx:      ctx,
		cancel:   cancel,
		exited:   make(chan struct{}),
		exitCode: 1,
	}
	s.fwdLevel.Set(opts.ForwardLogLevel)
	s.errLevel.Set(minLevel)
	if opts.LogLevel != nil {
		s.baseLevel = opts.LogLevel.Level()
	}
	fwd := newForwarder(ctx, s, &s.fwdLevel)
	s.log = slog.New(teeHandler{levelFilter{base.Handler(), &s.errLevel}, fwd})
	st := newStream(rwc, opts.MaxMessageBytes, s.log)
	s.conn = jsonrpc2.NewConn(st, jsonrpc2.WithCodec(codec{}))
	s.client = protocol.ClientDispatcher(s.conn)
	s.ws = workspace.New(ctx, workspace.Options{Backend: backend, Events: events{s}, Log: s.log, Debounce: opts.Debounce})
	s.diags.init()

	s.conn.Go(ctx, s.handler())
	select {
	case <-s.exited:
		s.log.Info("exit received")
	case <-st.eof:
		s.log.Info("the client closed the connection")
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	// Stop everything we own before the connection: project goroutines,
	// then handlers (their contexts derive from ctx), then the stream.
	cancel()
	s.ws.Close()
	fwd.stop()
	s.wg.Wait()
	// Close waits for the read goroutine. A read blocked on a stdin that
	// the client keeps open (after exit) may not be interruptible on every
	// platform; the process is about to exit then, so wait only a while.
	closed := make(chan struct{})
	go func() {
		_ = s.conn.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		s.log.Warn("the connection did not close within 2s; leaving it to process exit")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

func (s *Server) lifecycle() lifecycleState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// goBackground runs f on an owned goroutine that ends with the session.
func (s *Server) goBackground(f func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(s.ctx)
	}()
}

// notify sends a notification on a context detached from any request, so
// that a cancelled request still gets its side effects out.
func (s *Server) notify(method string, params any) {
	if err := s.conn.Notify(context.WithoutCancel(s.ctx), method, params); err != nil {
		s.log.Debug("notification not sent", "method", method, "error", err)
	}
}

// Shutdown implements protocol.Server.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	s.log.Info("shutdown requested")
	// Stop compiling; the connection stays up for exit.
	s.ws.Shutdown()
	return nil
}

// Exit implements protocol.Server.
func (s *Server) Exit(ctx context.Context) error {
	s.mu.Lock()
	if s.state == stateShutdown {
		s.exitCode = 0
	}
	s.mu.Unlock()
	s.exitOnce.Do(func() { close(s.exited) })
	return nil
}

// SetTrace implements protocol.Server: accepted and ignored (the log level
// is the daemon's).
func (s *Server) SetTrace(context.Context, *protocol.SetTraceParams) error { return nil }
