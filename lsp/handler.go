package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// handler builds the handler chain. Outermost first: guard,
// protocol.CancelHandler, ordered, gate, dispatch, then
// protocol.ServerHandler on the server.
//
// guard runs on the read loop first: it recovers panics into error
// responses, turns parameter decoding errors into InvalidParams, and never
// lets a notification return an error (jsonrpc2 would fail the whole
// connection for it).
//
// protocol.CancelHandler handles $/cancelRequest on the read loop, so a
// cancel takes effect even while earlier messages are still running.
//
// ordered takes a ticket on the read loop, releases the read loop
// (jsonrpc2.Async) and waits for the previous message's turn: messages are
// handled strictly in arrival order (text sync must be), yet the read loop
// never blocks, so a handler may call the client. A slow handler calls
// Release once it has read the state it needs, letting later messages run
// beside it. (jsonrpc2's own AsyncHandler releases everything at once,
// which reorders didChange notifications: 1–2 of 500 were applied out of
// order in a probe.)
//
// gate answers requests that come before initialize or after shutdown with
// the LSP errors; dispatch routes dfd's own methods.
func (s *Server) handler() jsonrpc2.Handler {
	return s.guard(protocol.CancelHandler(ordered(s.gate(s.dispatch(protocol.ServerHandler(s, nil))))))
}

// dispatch sends dfd's own methods (dfd/…) to Request with their params
// as they are; protocol.ServerHandler would first insist on decoding them
// and refuse requests without params.
func (s *Server) dispatch(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		method := req.Method()
		if !strings.HasPrefix(method, "dfd/") {
			return next(ctx, req)
		}
		if ctx.Err() != nil {
			return nil, protocol.ErrRequestCancelled
		}
		return s.Request(ctx, strings.Clone(method), jsontext.Value(bytes.Clone(req.Params())))
	}
}

// guard is the outermost handler; see handler.
func (s *Server) guard(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
		isCall := req.IsCall()
		defer func() {
			if p := recover(); p != nil {
				method := req.Method()
				s.log.Error("panic while handling a message", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				s.invariantViolations.Add(1)
				result = nil
				err = nil
				if isCall {
					err = jsonrpc2.Errorf(jsonrpc2.InternalError, "dfd: internal error handling %s: %v (the daemon keeps running; please report this)", method, p)
				}
			}
		}()
		result, err = next(ctx, req)
		if !isCall {
			if err != nil {
				s.log.Warn("ignoring a notification that failed", "method", req.Method(), "error", err)
			}
			return nil, nil
		}
		if err == nil {
			return result, nil
		}
		switch {
		case errors.Is(err, jsonrpc2.ErrParse):
			// The message parsed; its params did not fit the method.
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params for %s: %v", req.Method(), err)
		case errors.Is(err, context.Canceled):
			return nil, protocol.ErrRequestCancelled
		}
		var coded *jsonrpc2.Error
		if !errors.As(err, &coded) {
			// jsonrpc2 would send an error without a code as code 0,
			// which no client can tell apart: LSP's RequestFailed.
			return nil, jsonrpc2.NewError(jsonrpc2.Code(protocol.LSPErrorCodesRequestFailed), err.Error())
		}
		return nil, err
	}
}

// turn is one message's place in the order.
type turn struct {
	once sync.Once
	done chan struct{}
}

func (t *turn) release() { t.once.Do(func() { close(t.done) }) }

type turnKey struct{}

// ordered runs messages one at a time, in arrival order, unless a handler
// lets the next one start early with Release.
func ordered(next jsonrpc2.Handler) jsonrpc2.Handler {
	var mu sync.Mutex // guards prev
	prev := make(chan struct{})
	close(prev)
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		// On the read loop: take the next ticket before anything else.
		mine := &turn{done: make(chan struct{})}
		mu.Lock()
		wait := prev
		prev = mine.done
		mu.Unlock()
		defer mine.release()
		// Free the read loop; jsonrpc2 clones the request so it stays
		// valid until we return.
		jsonrpc2.Async(ctx)
		<-wait
		return next(context.WithValue(ctx, turnKey{}, mine), req)
	}
}

// Release lets the messages after the current one be handled while the
// current handler continues. Call it once the handler has read the state
// it depends on (documents, versions), before waiting for anything slow.
// It is a no-op outside a handler and when called twice.
func Release(ctx context.Context) {
	if t, ok := ctx.Value(turnKey{}).(*turn); ok {
		t.release()
	}
}

// gate enforces the lifecycle: only initialize (and exit) before
// initialize, nothing but exit after shutdown.
func (s *Server) gate(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		method := req.Method()
		if method == protocol.MethodExit {
			return next(ctx, req)
		}
		switch st := s.lifecycle(); {
		case st == stateNew && method != protocol.MethodInitialize:
			if req.IsCall() {
				return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, fmt.Sprintf("dfd: %s before initialize", method))
			}
			return nil, nil // notifications before initialize are dropped
		case st != stateNew && method == protocol.MethodInitialize:
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "dfd: initialize was already received")
		case st == stateShutdown:
			if req.IsCall() {
				return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("dfd: %s after shutdown", method))
			}
			return nil, nil
		}
		return next(ctx, req)
	}
}
