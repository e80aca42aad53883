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
	"strings"
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

// stream is a jsonrpc2.Stream with LSP header framing that survives bad
// input. jsonrpc2's own header stream ends the connection on the first
// message that is not valid JSON-RPC; an editor's sidecar must instead
// answer such a message with an error and keep serving. So this stream
// reads frames itself and answers, on its own, messages that cannot be
// decoded (ParseError / InvalidRequest, with the id when one can be
// found) and messages over the size limit; only well-formed messages
// reach the connection. Writes go through jsonrpc2's header stream.
type stream struct {
	in       *bufio.Reader
	out      jsonrpc2.Stream
	closer   io.Closer
	maxBytes int
	log      *slog.Logger

	eofOnce sync.Once
	eof     chan struct{} // closed when reading stops for good
}

func newStream(rwc io.ReadWriteCloser, maxBytes int, log *slog.Logger) *stream {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return &stream{
		in:       bufio.NewReader(rwc),
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
			s.log.Warn("skipping a message with a malformed header", "error", err)
			s.reply(ctx, jsonrpc2.ID{}, jsonrpc2.NewError(jsonrpc2.ParseError, err.Error()))
			continue
		}
		if err != nil {
			s.stop()
			return nil, 0, err
		}
		if length > s.maxBytes {
			// Skip the body without holding it in memory.
			if _, err := io.CopyN(io.Discard, s.in, int64(length)); err != nil {
				s.stop()
				return nil, 0, io.ErrUnexpectedEOF
			}
			s.log.Warn("dropped an oversized message", "bytes", length, "limit", s.maxBytes)
			s.reply(ctx, jsonrpc2.ID{}, jsonrpc2.Errorf(jsonrpc2.InvalidRequest,
				"message of %d bytes exceeds the limit of %d bytes; it was ignored", length, s.maxBytes))
			continue
		}
		body := make([]byte, length) // owned: requests may borrow it
		if _, err := io.ReadFull(s.in, body); err != nil {
			s.stop()
			return nil, 0, io.ErrUnexpectedEOF
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			var werr *jsonrpc2.Error
			if !errors.As(err, &werr) {
				werr = jsonrpc2.NewError(jsonrpc2.ParseError, err.Error())
			}
			s.log.Warn("answering an undecodable message", "error", err, "message", abbreviate(body, 200))
			s.reply(ctx, idOf(body), jsonrpc2.NewError(werr.Code, fmt.Sprintf("%s: %s", werr.Message, abbreviate(body, 80))))
			continue
		}
		return msg, int64(length), nil
	}
}

// readHeader reads one header block and returns its Content-Length.
// Memory stays bounded whatever arrives: a line longer than the reader's
// buffer is discarded up to its end and reported as a bad header.
func (s *stream) readHeader() (int, error) {
	length := -1
	read := 0
	for lines := 0; ; lines++ {
		raw, err := s.in.ReadSlice('\n')
		read += len(raw)
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = s.in.ReadSlice('\n')
			}
			if err != nil {
				return 0, err
			}
			return 0, fmt.Errorf("%w: header line longer than %d bytes", errBadHeader, s.in.Size())
		}
		if err != nil {
			if err == io.EOF && read > 0 {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if read > maxHeaderBytes {
			return 0, fmt.Errorf("%w: header longer than %d bytes", errBadHeader, maxHeaderBytes)
		}
		line := strings.TrimRight(string(raw), "\r\n")
		if line == "" {
			if lines == 0 {
				continue // stray blank line between messages
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return 0, fmt.Errorf("%w: %q", errBadHeader, abbreviate([]byte(line), 60))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("%w: Content-Length %q", errBadHeader, strings.TrimSpace(value))
			}
			length = n
		}
	}
	if length < 0 {
		return 0, fmt.Errorf("%w: no Content-Length", errBadHeader)
	}
	return length, nil
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
