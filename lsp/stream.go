package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// DefaultMaxMessageBytes bounds one incoming message. Editors send whole
// files in didOpen; 64 MiB is far above any Dataform file yet keeps a
// broken or hostile header from making the daemon allocate a gigabyte
// (jsonrpc2's own cap is 1 GiB).
const DefaultMaxMessageBytes = 64 << 20

// maxHeaderBytes bounds the header block of one message.
const maxHeaderBytes = 8 << 10

// headerName is what the reader looks for, case-insensitively (header
// names are), to find its place again after bad input. It has no proper
// prefix that is also its suffix, so a failed partial match never hides
// the start of a real one except at the byte that broke it.
const headerName = "content-length:"

// stream is a jsonrpc2.Stream with LSP header framing that survives bad
// input. jsonrpc2's own header stream ends the connection on the first
// message that is not valid JSON-RPC; an editor's sidecar must instead
// answer such a message with an error and keep serving. So this stream
// reads frames itself and answers, on its own, messages that cannot be
// decoded (ParseError / InvalidRequest, with the id when one can be
// found) and messages over the size limit; only well-formed messages
// reach the connection. Writes go through jsonrpc2's header stream.
//
// A wrong Content-Length or a stray byte would otherwise put the reader
// out of step for good (the rest of a short body read as a header, or a
// long body swallowing the next header). So after a malformed header, or
// a body that is not even JSON, the reader scans forward for the next
// "Content-Length:" and carries on from there.
type stream struct {
	in       input
	out      jsonrpc2.Stream
	closer   io.Closer
	maxBytes int
	log      *slog.Logger

	// resyncing is set while the reader looks for its place again: a
	// header found by scanning that turns out malformed is part of the
	// bad input already answered, not a new bad message.
	resyncing bool
	skipped   int64 // bytes thrown away since resyncing began

	eofOnce sync.Once
	eof     chan struct{} // closed when reading stops for good
}

func newStream(rwc io.ReadWriteCloser, maxBytes int, log *slog.Logger) *stream {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return &stream{
		in:       input{r: bufio.NewReader(rwc)},
		out:      jsonrpc2.NewHeaderStream(rwc),
		closer:   rwc,
		maxBytes: maxBytes,
		log:      log,
		eof:      make(chan struct{}),
	}
}

// errBadHeader is a malformed header block; the stream skips it.
var errBadHeader = errors.New("malformed message header")

func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			s.stop()
			return nil, 0, err
		}
		length, err := s.readHeader()
		if errors.Is(err, errBadHeader) {
			if !s.resyncing {
				s.log.Warn("skipping a message with a malformed header", "error", err)
				s.reply(ctx, jsonrpc2.ID{}, jsonrpc2.NewError(jsonrpc2.ParseError, err.Error()))
			}
			if err := s.resync(); err != nil {
				return nil, 0, s.fail(err)
			}
			continue
		}
		if err != nil {
			return nil, 0, s.fail(err)
		}
		if s.resyncing {
			s.resyncing = false
			if s.skipped > 0 {
				s.log.Warn("resynchronised on the next Content-Length header", "skippedBytes", s.skipped)
			}
			s.skipped = 0
		}
		if length > s.maxBytes {
			// Skip the body without holding it in memory.
			if err := s.in.discard(int64(length)); err != nil {
				return nil, 0, s.fail(io.ErrUnexpectedEOF)
			}
			s.log.Warn("dropped an oversized message", "bytes", length, "limit", s.maxBytes)
			s.reply(ctx, jsonrpc2.ID{}, jsonrpc2.Errorf(jsonrpc2.InvalidRequest,
				"message of %d bytes exceeds the limit of %d bytes; it was ignored", length, s.maxBytes))
			continue
		}
		body := make([]byte, length) // owned: requests may borrow it
		if err := s.in.readFull(body); err != nil {
			return nil, 0, s.fail(io.ErrUnexpectedEOF)
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err == nil {
			return msg, int64(length), nil
		}
		if json.Valid(body) {
			// The framing held (the body is exactly one JSON value); only
			// the message is wrong.
			s.replyUndecodable(ctx, body, err)
			continue
		}
		// The length was probably wrong. Too long, and the body holds the
		// next header: what comes before it may be a whole message.
		if at := headerIn(body); at >= 0 {
			s.in.unread(body[at:])
			s.resyncing = true
			before := body[:at]
			if msg, err := jsonrpc2.DecodeMessage(before); err == nil {
				s.log.Warn("a message's Content-Length ran into the next header; reading the message before it",
					"contentLength", length, "messageBytes", at)
				return msg, int64(at), nil
			}
			s.replyUndecodable(ctx, before, err)
			continue
		}
		// Too short (the rest of the body is still to come), or garbage:
		// answer first, as the scan may wait for the client's next message.
		s.replyUndecodable(ctx, body, err)
		s.resyncing = true
		if err := s.resync(); err != nil {
			return nil, 0, s.fail(err)
		}
	}
}

// fail ends reading for good.
func (s *stream) fail(err error) error {
	if s.resyncing && s.skipped > 0 {
		s.log.Warn("input ended while looking for a Content-Length header", "skippedBytes", s.skipped)
	}
	s.stop()
	return err
}

// replyUndecodable answers a message that failed to decode.
func (s *stream) replyUndecodable(ctx context.Context, body []byte, err error) {
	var werr *jsonrpc2.Error
	if !errors.As(err, &werr) {
		werr = jsonrpc2.NewError(jsonrpc2.ParseError, err.Error())
	}
	s.log.Warn("answering an undecodable message", "error", err, "message", abbreviate(body, 200))
	s.reply(ctx, idOf(body), jsonrpc2.NewError(werr.Code, fmt.Sprintf("%s: %s", werr.Message, abbreviate(body, 80))))
}

// resync discards input up to the next "Content-Length:" and leaves that
// header to be read. Scanned bytes are dropped as they go, so garbage of
// any length costs no memory.
func (s *stream) resync() error {
	s.resyncing = true
	var got [len(headerName)]byte // the match so far, in its original case
	m := 0
	for {
		b, err := s.in.ReadByte()
		if err != nil {
			s.skipped += int64(m)
			if err == io.EOF && m > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if lower(b) == headerName[m] {
			got[m] = b
			if m++; m == len(headerName) {
				s.in.unread(got[:])
				return nil
			}
			continue
		}
		// headerName does not overlap itself: only b may start a match.
		s.skipped += int64(m)
		m = 0
		if lower(b) == headerName[0] {
			got[0], m = b, 1
		} else {
			s.skipped++
		}
	}
}

// headerIn returns where the next header starts in a body that is too
// long: the first "Content-Length:", or a start of it at the very end (a
// body one byte too long ends in "C"). -1 if there is none.
func headerIn(body []byte) int {
	for i := 0; i+len(headerName) <= len(body); i++ {
		if lower(body[i]) == headerName[0] && bytes.EqualFold(body[i:i+len(headerName)], []byte(headerName)) {
			return i
		}
	}
	for n := min(len(headerName)-1, len(body)); n > 0; n-- {
		if bytes.EqualFold(body[len(body)-n:], []byte(headerName[:n])) {
			return len(body) - n
		}
	}
	return -1
}

// readHeader reads one header block and returns its Content-Length.
// Memory stays bounded whatever arrives (maxHeaderBytes). A malformed
// block is reported as errBadHeader with the input put back from just
// after the start of the offending line, where resync looks for the next
// header: a short body's tail or garbage may run straight into one
// ("}Content-Length: 52").
func (s *stream) readHeader() (int, error) {
	raw := make([]byte, 0, 64)
	length := -1
	for {
		start := len(raw)
		name, value, err := s.headerLine(&raw)
		if errors.Is(err, errBadHeader) {
			s.skipped += int64(start + 1)
			s.in.unread(raw[start+1:])
			return 0, err
		}
		if err != nil {
			if err == io.EOF && len(raw) > 0 {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if name == nil { // blank line
			if start == 0 {
				raw = raw[:0] // stray blank line between messages
				continue
			}
			if length < 0 {
				s.skipped++
				s.in.unread(raw[1:])
				return 0, fmt.Errorf("%w: no Content-Length", errBadHeader)
			}
			return length, nil
		}
		if bytes.EqualFold(name, []byte("Content-Length")) {
			v := string(bytes.Trim(value, " \t"))
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				s.skipped += int64(start + 1)
				s.in.unread(raw[start+1:])
				return 0, fmt.Errorf("%w: Content-Length %q", errBadHeader, v)
			}
			length = n
		}
	}
}

// headerLine reads one header line, appending its bytes to *raw, and
// returns its name and value (both nil for a blank line). It stops at the
// first byte that cannot belong to a well-formed line, so that the scan
// for the next header starts close to where the garbage began and no
// byte is scanned many times over.
func (s *stream) headerLine(raw *[]byte) (name, value []byte, err error) {
	start := len(*raw)
	colon := -1
	isLength := false
	for {
		b, err := s.in.ReadByte()
		if err != nil {
			return nil, nil, err
		}
		*raw = append(*raw, b)
		line := (*raw)[start:]
		if len(*raw) > maxHeaderBytes {
			return nil, nil, fmt.Errorf("%w: header longer than %d bytes", errBadHeader, maxHeaderBytes)
		}
		if n := len(line); n >= 2 && line[n-2] == '\r' && b != '\n' {
			return nil, nil, fmt.Errorf("%w: carriage return inside %q", errBadHeader, abbreviate(line, 60))
		}
		switch {
		case b == '\n':
			content := bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
			if len(content) == 0 {
				return nil, nil, nil
			}
			if colon < 0 {
				return nil, nil, fmt.Errorf("%w: %q", errBadHeader, abbreviate(content, 60))
			}
			return bytes.Trim(content[:colon], " \t"), content[colon+1:], nil
		case b == '\r':
		case colon < 0 && b == ':':
			colon = len(line) - 1
			name := bytes.Trim(line[:colon], " \t")
			if len(name) == 0 || bytes.ContainsAny(name, " \t") {
				return nil, nil, fmt.Errorf("%w: %q", errBadHeader, abbreviate(line, 60))
			}
			isLength = bytes.EqualFold(name, []byte("Content-Length"))
		case colon < 0:
			if !isTokenByte(b) && b != ' ' && b != '\t' {
				return nil, nil, fmt.Errorf("%w: %q", errBadHeader, abbreviate(line, 60))
			}
		case isLength:
			if (b < '0' || b > '9') && b != ' ' && b != '\t' {
				return nil, nil, fmt.Errorf("%w: Content-Length %q", errBadHeader, abbreviate(line[colon+1:], 60))
			}
		}
	}
}

func (s *stream) reply(ctx context.Context, id jsonrpc2.ID, err *jsonrpc2.Error) {
	if _, werr := s.out.Write(ctx, jsonrpc2.NewResponse(id, nil, err)); werr != nil {
		s.log.Debug("could not answer a bad message", "error", werr)
	}
}

// idOf digs the request id out of a message that failed to decode, so the
// error response can name it (JSON-RPC: null only when it cannot be found).
func idOf(body []byte) jsonrpc2.ID {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &probe) != nil || len(probe.ID) == 0 {
		return jsonrpc2.ID{}
	}
	var n int64
	if json.Unmarshal(probe.ID, &n) == nil {
		return jsonrpc2.NewNumberID(n)
	}
	var str string
	if json.Unmarshal(probe.ID, &str) == nil {
		return jsonrpc2.NewStringID(str)
	}
	return jsonrpc2.ID{}
}

func abbreviate(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func (s *stream) stop() { s.eofOnce.Do(func() { close(s.eof) }) }

func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.out.Write(ctx, msg)
}

func (s *stream) Close() error {
	s.stop()
	return s.closer.Close()
}

// isTokenByte reports whether b may appear in a header name (RFC 9110's
// tchar).
func isTokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), b) >= 0
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// input is the connection's input with bytes put back in front of it:
// the part of a too-long body from the next header on, or a malformed
// header after its first byte, which the reader reads again. What is put
// back was read already, so it is bounded by maxBytes plus a header.
type input struct {
	pending []byte
	r       *bufio.Reader
}

func (s *input) ReadByte() (byte, error) {
	if len(s.pending) == 0 {
		return s.r.ReadByte()
	}
	b := s.pending[0]
	s.pending = s.pending[1:]
	if len(s.pending) == 0 {
		s.pending = nil // let a big body go
	}
	return b, nil
}

// unread puts b back in front of the input. It copies: b may be part of
// a body a request keeps.
func (s *input) unread(b []byte) {
	if len(b) == 0 {
		return
	}
	p := make([]byte, 0, len(b)+len(s.pending))
	s.pending = append(append(p, b...), s.pending...)
}

func (s *input) readFull(p []byte) error {
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	if len(s.pending) == 0 {
		s.pending = nil
	}
	_, err := io.ReadFull(s.r, p[n:])
	return err
}

func (s *input) discard(n int64) error {
	k := min(n, int64(len(s.pending)))
	s.pending = s.pending[k:]
	if len(s.pending) == 0 {
		s.pending = nil
	}
	_, err := io.CopyN(io.Discard, s.r, n-k)
	return err
}
