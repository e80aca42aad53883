package jit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// hostWorker is the host's side of one worker process. Lifecycle (start,
// stop, kill, crash diagnosis) and the conversation of one request (call)
// live here; which worker serves which request is the pool's business.
type hostWorker struct {
	pid   int
	log   *slog.Logger
	cmd   *exec.Cmd
	stdin *os.File
	out   *wire.Writer
	hello *wirepb.Hello

	frames   chan *wirepb.Frame // from readLoop, except Log frames
	dead     chan struct{}      // closed when readLoop ends
	deadErr  error              // why readLoop ended; set before dead is closed
	exited   chan struct{}      // closed when the process has been reaped
	stderr   *stderrLog
	stopping chan struct{} // closed by kill: unblocks readLoop
	killOnce sync.Once
	wg       sync.WaitGroup // readLoop, the stderr copy, the reaper

	onLog atomic.Pointer[func(level, msg string)] // console output of the current request
	cur   atomic.Pointer[callState]               // the request in flight, for its adapter calls

	nextID uint64       // used only by the goroutine holding the worker
	served atomic.Int64 // requests sent to the worker

	lastUsed time.Time // guarded by the pool's mu
	kept     bool      // holds a kept compile context (engine.Keeper); guarded by the pool's mu
}

type workerConfig struct {
	argv         []string
	env          []string
	dir          string
	maxFrame     int
	startTimeout time.Duration
	coreVersion  string
	log          *slog.Logger
}

// startWorker starts a worker process and waits for its Hello, racing it
// against the start timeout, ctx and the process exiting (go-plugin's
// handshake). On failure the process is gone when it returns.
func startWorker(ctx context.Context, cfg workerConfig) (*hostWorker, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting a jit worker: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("starting a jit worker: %w", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("starting a jit worker: %w", err)
	}
	cmd := exec.Command(cfg.argv[0], cfg.argv[1:]...)
	// stdin is always our pipe: a worker must never inherit the daemon's
	// stdin, which carries the editor's JSON-RPC. The pipes are
	// close-on-exec, so no other child inherits a worker's stdin either
	// (which would keep it from ever seeing EOF).
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.Env = cfg.env
	cmd.Dir = cfg.dir
	cmd.SysProcAttr = procAttr()
	err = startCmd(cmd)
	closeAll(stdinR, stdoutW, stderrW) // the child's ends
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR)
		return nil, fmt.Errorf("starting a jit worker (%s): %w", cfg.argv[0], err)
	}
	pid := cmd.Process.Pid
	log := cfg.log.With("worker", pid)
	w := &hostWorker{
		pid:      pid,
		log:      log,
		cmd:      cmd,
		stdin:    stdinW,
		out:      wire.NewWriter(stdinW),
		frames:   make(chan *wirepb.Frame, 16),
		dead:     make(chan struct{}),
		exited:   make(chan struct{}),
		stderr:   newStderrLog(log),
		stopping: make(chan struct{}),
	}
	w.wg.Add(3)
	go func() {
		defer w.wg.Done()
		defer stderrR.Close()
		w.stderr.copy(stderrR)
	}()
	live.add(w)
	go func() {
		defer w.wg.Done()
		defer close(w.exited)
		defer live.remove(w)
		_ = cmd.Wait()
	}()
	go func() {
		defer w.wg.Done()
		defer stdoutR.Close()
		w.readLoop(wire.NewReader(stdoutR, cfg.maxFrame))
	}()

	if err := w.handshake(ctx, cfg); err != nil {
		w.stop(0)
		return nil, err
	}
	return w, nil
}

// live is every worker process started and not yet reaped, for
// KillWorkers.
var live = liveWorkers{m: map[*hostWorker]struct{}{}}

type liveWorkers struct {
	mu sync.Mutex // guards m
	m  map[*hostWorker]struct{}
}

func (l *liveWorkers) add(w *hostWorker) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[w] = struct{}{}
}

func (l *liveWorkers) remove(w *hostWorker) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, w)
}

// KillWorkers kills at once every worker process this process started
// (each one's whole process group) and returns without waiting for them.
// It is for a process about to exit without closing its pools: dfd's
// forced exit after a signal (cmd/dfd). On Linux the workers would die
// with it anyway (Pdeathsig); elsewhere nothing else would end them.
func KillWorkers() {
	live.mu.Lock()
	defer live.mu.Unlock()
	for w := range live.m {
		killGroup(w.pid)
		_ = w.cmd.Process.Kill()
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

func (w *hostWorker) handshake(ctx context.Context, cfg workerConfig) error {
	timer := time.NewTimer(cfg.startTimeout)
	defer timer.Stop()
	select {
	case f := <-w.frames:
		h := f.GetHello()
		switch {
		case h == nil:
			w.kill()
			return w.crash(fmt.Sprintf("sent %T before its handshake", f.GetKind()), nil)
		case h.GetProtocolVersion() != wire.ProtocolVersion:
			w.kill()
			return w.crash(fmt.Sprintf("speaks protocol %d, not %d (a dfd binary of another version?)", h.GetProtocolVersion(), wire.ProtocolVersion), nil)
		case h.GetCoreVersion() != cfg.coreVersion:
			w.kill()
			return w.crash(fmt.Sprintf("loaded @dataform/core %s, not %s", h.GetCoreVersion(), cfg.coreVersion), nil)
		}
		w.hello = h
		w.log.Debug("jit worker ready", "startup", time.Duration(h.GetStartupMicros())*time.Microsecond)
		return nil
	case <-w.dead:
		return w.crash("exited before its handshake", nil)
	case <-timer.C:
		w.kill()
		return w.crash(fmt.Sprintf("killed: no handshake within %s", cfg.startTimeout), nil)
	case <-ctx.Done():
		w.kill()
		return w.crash("killed: canceled during start", context.Cause(ctx))
	}
}

// readLoop reads the worker's frames until its stdout ends. Log frames are
// relayed here; the rest go to whoever holds the worker. A malformed or
// oversized frame ends this worker, never the host.
func (w *hostWorker) readLoop(r *wire.Reader) {
	defer close(w.dead)
	for {
		f, err := r.Read()
		if err != nil {
			if err != io.EOF {
				w.log.Error("ending jit worker: bad output", "err", err)
				w.kill()
			}
			w.deadErr = err
			return
		}
		if l := f.GetLog(); l != nil {
			if fn := w.onLog.Load(); fn != nil {
				(*fn)(l.GetLevel(), l.GetMessage())
			} else {
				w.log.Debug("console."+l.GetLevel(), "msg", l.GetMessage())
			}
			continue
		}
		if a := f.GetAccepted(); a != nil {
			// Recorded here, before any later frame is read: call sees it
			// when the worker dies right after, whatever it selects first.
			st := w.cur.Load()
			if st == nil || st.id != a.GetId() || st.accepted.Load() {
				w.badOutput(fmt.Errorf("%w: accepted request %d, which is not waiting to be", wire.ErrProtocol, a.GetId()))
				return
			}
			st.accepted.Store(true)
			continue
		}
		if c := f.GetAdapterCall(); c != nil {
			// Started from here rather than from call's loop: one goroutine
			// hop less per adapter round trip.
			st := w.cur.Load()
			if st == nil || st.id != c.GetRequestId() || !st.accepted.Load() {
				w.badOutput(fmt.Errorf("%w: an adapter call for request %d, which is not running", wire.ErrProtocol, c.GetRequestId()))
				return
			}
			if i := c.GetPrefetched(); i > 0 {
				// Answered in the worker: recorded here, in frame order.
				if st.prefetched == nil || !st.prefetched(int(i)-1) {
					w.badOutput(fmt.Errorf("%w: request %d used prefetched answer %d, which it was not sent", wire.ErrProtocol, c.GetRequestId(), i))
					return
				}
				continue
			}
			st.start(func(ctx context.Context, rpc engine.RPC) { w.answer(ctx, c, rpc) })
			continue
		}
		select {
		case w.frames <- f:
		case <-w.stopping:
			w.deadErr = errors.New("killed")
			return
		}
	}
}

// badOutput ends the worker for a frame that breaks the conversation, as
// readLoop's last act.
func (w *hostWorker) badOutput(err error) {
	w.log.Error("ending jit worker: bad output", "err", err)
	w.kill()
	w.deadErr = err
}

func (w *hostWorker) protocolFailure(what string) error {
	w.log.Error("ending jit worker: " + what)
	w.kill()
	return w.crash("broke the protocol: "+what, nil)
}

// crash describes the worker's end for the request it failed: it waits
// (briefly) for the process to be reaped and its stderr to drain, so that
// the error carries the exit status and the last words (a Go panic, say).
func (w *hostWorker) crash(reason string, cause error) *CrashError {
	select {
	case <-w.exited:
	case <-time.After(2 * time.Second):
		w.kill() // stdout closed but the process lingers: make sure it goes
		<-w.exited
	}
	// Both streams end when the process does; bound the wait all the same.
	drainCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	drained := drainCtx.Done()
	select {
	case <-w.dead:
		if errors.Is(w.deadErr, wire.ErrProtocol) {
			reason = fmt.Sprintf("%s: %v", reason, w.deadErr)
		}
	case <-drained:
	}
	select {
	case <-w.stderr.done:
	case <-drained:
	}
	e := &CrashError{PID: w.pid, Reason: reason, ExitCode: -1, LastStderr: w.stderr.last(), cause: cause}
	if st := w.cmd.ProcessState; st != nil {
		e.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	}
	return e
}

// isDead reports whether the worker's output has ended (it exited or was
// killed).
func (w *hostWorker) isDead() bool {
	select {
	case <-w.dead:
		return true
	case <-w.exited:
		return true
	default:
		return exitedUnreaped(w.pid)
	}
}

// kill ends the worker's whole process group at once.
func (w *hostWorker) kill() {
	w.killOnce.Do(func() {
		killGroup(w.pid)
		_ = w.cmd.Process.Kill()
		close(w.stopping)
	})
}

// stop closes the worker's stdin, which asks it to exit, waits up to grace
// for it to do so, kills it otherwise, and waits for its goroutines.
func (w *hostWorker) stop(grace time.Duration) {
	_ = w.stdin.Close()
	select {
	case <-w.exited:
	case <-time.After(grace):
	}
	w.kill()
	w.wg.Wait()
}
