package jit

import (
	"context"
	"errors"
	"fmt"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// adapter answers the DbAdapter calls of request id by asking the host:
// an AdapterCall frame out, the matching AdapterResult back (the read loop
// routes it by call id). Several calls may be in flight.
func (s *server) adapter(id uint64) engine.RPC {
	return func(ctx context.Context, method string, req []byte) ([]byte, error) {
		callID := s.nextCall.Add(1)
		ch := make(chan *wirepb.AdapterResult, 1)
		s.mu.Lock()
		s.calls[callID] = ch
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.calls, callID)
			s.mu.Unlock()
		}()
		err := s.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_AdapterCall{AdapterCall: &wirepb.AdapterCall{
			CallId: callID, RequestId: id, Method: method, Request: req,
		}}})
		if err != nil {
			return nil, fmt.Errorf("%s: sending the call to the host: %w", method, err)
		}
		select {
		case r := <-ch:
			switch o := r.Outcome.(type) {
			case *wirepb.AdapterResult_Response:
				return o.Response, nil
			case *wirepb.AdapterResult_Error:
				// The message reaches the JiT code verbatim as the
				// rejected promise's Error message.
				return nil, errors.New(o.Error.GetMessage())
			}
			return nil, fmt.Errorf("%s: the host answered with neither a response nor an error", method)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// prefetchedAnswers answers calls of request id that match one of its
// prefetched calls exactly (engine.Runtime.SetImmediate): no round trip;
// the host is only told (AdapterCall.prefetched), so that its record of the
// calls stays complete and in order. nil when there are none.
func (s *server) prefetchedAnswers(id uint64, prefetched []*wirepb.PrefetchedCall) func(method string, req []byte) ([]byte, bool) {
	if len(prefetched) == 0 {
		return nil
	}
	known := make(map[string]int, len(prefetched))
	for i, p := range prefetched {
		k := p.GetMethod() + "\x00" + string(p.GetRequest())
		if _, dup := known[k]; !dup {
			known[k] = i
		}
	}
	return func(method string, req []byte) ([]byte, bool) {
		i, ok := known[method+"\x00"+string(req)]
		if !ok {
			return nil, false
		}
		err := s.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_AdapterCall{AdapterCall: &wirepb.AdapterCall{
			CallId: s.nextCall.Add(1), RequestId: id, Method: method, Prefetched: uint32(i + 1),
		}}})
		if err != nil {
			// The host would not hear of the call: let it go the long way
			// (which reports the broken pipe).
			return nil, false
		}
		return prefetched[i].GetResponse(), true
	}
}
