package lsp

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/protocol"
)

// workDone is one work-done progress ($/progress begin … end). With a
// client that cannot show progress it only logs.
type workDone struct {
	s     *Server
	token protocol.ProgressToken
	title string
	start time.Time
}

// beginProgress starts a work-done progress. Creating the token is a call
// to the client; it is bounded so that a client that never answers cannot
// stall compiling.
func (s *Server) beginProgress(ctx context.Context, title, message string) *workDone {
	w := &workDone{s: s, title: title, start: time.Now()}
	if !s.capabilities().workDoneProgress || s.lifecycle() != stateInitialized {
		return w
	}
	token := protocol.String(fmt.Sprintf("dfd-%d", s.progressSeq.Add(1)))
	// Bounded, and cancelled with the work it is about (a project being
	// closed must not wait for an unresponsive client).
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.client.WorkDoneProgressCreate(cctx, &protocol.WorkDoneProgressCreateParams{Token: token}); err != nil {
		s.log.Debug("no progress token", "error", err)
		return w
	}
	w.token = token
	begin := protocol.WorkDoneProgressBegin{Kind: "begin", Title: title}
	if message != "" {
		begin.Message = &message
	}
	w.send(&begin)
	return w
}

func (w *workDone) send(v any) {
	if w.token == nil {
		return
	}
	b, err := protocol.Marshal(v)
	if err != nil {
		return
	}
	w.s.notify(protocol.MethodProgress, &protocol.ProgressParams{Token: w.token, Value: b})
}

// Report implements workspace.Progress.
func (w *workDone) Report(msg string) {
	w.send(&protocol.WorkDoneProgressReport{Kind: "report", Message: &msg})
}

// End implements workspace.Progress.
func (w *workDone) End(msg string) {
	w.send(&protocol.WorkDoneProgressEnd{Kind: "end", Message: &msg})
	w.token = nil
}
