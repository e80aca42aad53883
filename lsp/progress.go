package lsp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// workDone is one work-done progress ($/progress begin … end). With a
// client that cannot show progress it only logs.
//
// Creating its token is a call to the client, made in the background: the
// work it reports on (a compile, whose diagnostics the user waits for)
// never waits for the client's answer. Reports and the end that come
// before the token exists are sent after the begin, in order, once it
// does; if the client refuses the token, nothing is sent.
type workDone struct {
	s     *Server
	title string
	start time.Time

	mu      sync.Mutex // guards the fields below
	created bool       // the client answered the create call (token nil if it refused)
	token   protocol.ProgressToken
	pending []any // reports and the end, until created
	ended   bool
}

// beginProgress starts a work-done progress. The token's create call is
// bounded (5 s) and ends with the session, so that an unresponsive client
// costs nothing but the progress. It is not cancelled when the work ends:
// work that ends before the client answers (a check of nothing takes
// microseconds) is still reported, begin then end, so that a client
// waiting for the end of a check sees it.
func (s *Server) beginProgress(_ context.Context, title, message string) *workDone {
	w := &workDone{s: s, title: title, start: time.Now()}
	if !s.capabilities().workDoneProgress || s.lifecycle() != stateInitialized {
		w.created = true
		return w
	}
	token := protocol.String(fmt.Sprintf("dfd-%d", s.progressSeq.Add(1)))
	s.goBackground(func(sctx context.Context) {
		cctx, cancel := context.WithTimeout(sctx, 5*time.Second)
		defer cancel()
		err := s.client.WorkDoneProgressCreate(cctx, &protocol.WorkDoneProgressCreateParams{Token: token})
		w.mu.Lock()
		defer w.mu.Unlock()
		w.created = true
		if err != nil {
			s.log.Debug("no progress token", "error", err)
			w.pending = nil
			return
		}
		w.token = token
		begin := protocol.WorkDoneProgressBegin{Kind: "begin", Title: title}
		if message != "" {
			begin.Message = &message
		}
		w.sendLocked(&begin)
		for _, v := range w.pending {
			w.sendLocked(v)
		}
		w.pending = nil
		if w.ended {
			w.token = nil
		}
	})
	return w
}

// sendLocked sends one progress value; w.mu is held.
func (w *workDone) sendLocked(v any) {
	if w.token == nil {
		return
	}
	b, err := protocol.Marshal(v)
	if err != nil {
		return
	}
	w.s.notify(protocol.MethodProgress, &protocol.ProgressParams{Token: w.token, Value: b})
}

// queue sends v now, or once the token exists.
func (w *workDone) queue(v any, end bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	w.ended = end
	if !w.created {
		w.pending = append(w.pending, v)
		return
	}
	w.sendLocked(v)
	if end {
		w.token = nil
	}
}

// Report implements workspace.Progress.
func (w *workDone) Report(msg string) {
	w.queue(&protocol.WorkDoneProgressReport{Kind: "report", Message: &msg}, false)
}

// End implements workspace.Progress.
func (w *workDone) End(msg string) {
	w.queue(&protocol.WorkDoneProgressEnd{Kind: "end", Message: &msg}, true)
}
