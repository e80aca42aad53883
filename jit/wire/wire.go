// Package wire is the protocol between dfd's worker pool (the host) and a
// `dfd worker` process: length-delimited protobuf frames on the worker's
// stdin and stdout, as Bazel's persistent workers use, with worker→host
// DbAdapter calls added in the way go-plugin multiplexes callbacks.
//
// # Framing
//
// Each frame is a dfd.wire.Frame (jit/wirepb/wire.proto) preceded by its
// length as an unsigned varint (the format of google.golang.org/protobuf/encoding/protodelim).
// The worker's stdout carries frames and nothing else; everything it wants a
// human to read goes to stderr, which the host re-logs under the worker's
// name. No JSON, no base64: request and response bytes travel as protobuf
// bytes fields.
//
// A frame longer than the reader's limit (DefaultMaxFrame unless configured),
// a length prefix that is not a varint, a body that does not parse, a stream
// that ends inside a frame, or one that stalls there for DefaultStallTimeout
// (a stray line of text on stdout reads as a length prefix and then waits
// for bytes that never come) is a protocol error. The side that sees one
// ends that connection: the host kills the worker (and logs why); the worker
// exits. It never takes the host down.
//
// # Conversation
//
//  1. The worker compiles @dataform/core and prepares its first runtime, then
//     sends Hello{protocol_version, core_version, pid, …}. The host checks the
//     protocol and core versions and only then sends requests.
//  2. The host sends Request{id, Compile|Jit}. As soon as the worker has
//     read it, and before it runs any of it, the worker sends
//     Accepted{id}: every other frame about the request comes after that
//     one. It answers every request with exactly one Response{id,
//     result|error, stats}. A worker serves one request at a time; requests
//     that arrive meanwhile queue (each is accepted when read). A worker
//     that dies before accepting a request has run nothing of it, no user
//     code and no adapter call, so the host runs the request on another
//     worker (unless the worker exited on a protocol error: it may have
//     refused the request itself): that is how a worker killed from
//     outside while idle (which can look alive for a moment) costs no
//     request its answer, with no clock involved. A Response or
//     AdapterCall of a request not yet accepted is a protocol error.
//  3. While a Jit request runs, its DbAdapter calls reach the host as
//     AdapterCall{call_id, request_id, method, request}; several may be in
//     flight. The host answers each with exactly one
//     AdapterResult{call_id, response|error}. A failed call reaches the JiT
//     code as a rejected promise carrying the error's message. Results for
//     calls the worker no longer waits for (the request ended) are ignored.
//  4. Cancel{id} asks the worker to interrupt request id; the request is then
//     answered with CANCELED (or with its real outcome if it finished first).
//     A Cancel for a request already answered, or unknown, is ignored. A
//     worker whose Hello sets interrupted_by_sigint cannot read frames while
//     a compile runs: after the Cancel of a Compile request the host sends
//     it SIGINT, which stops that compile.
//  5. Log{request_id, level, message} carries console output of user code.
//  6. When its stdin reaches EOF the worker interrupts what it is doing and
//     exits: that is how a worker never outlives its host.
//
// Error codes: SCRIPT_ERROR (JavaScript threw; message and stack are the
// script's), DEADLINE_EXCEEDED (the request's own timeout), CANCELED,
// RESOURCE_EXHAUSTED (the worker's heap ceiling was crossed: the worker
// answers and then exits), INVALID_ARGUMENT, INTERNAL; UNAVAILABLE is used
// by the host for adapter calls it could not answer.
package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/jit/wirepb"
)

// ProtocolVersion is sent in Hello; the host refuses a worker that speaks
// another version (an old binary left running after an upgrade, say).
// Version 2 added Accepted.
const ProtocolVersion = 2

// DefaultMaxFrame is the largest frame accepted unless configured: large
// enough for the compiled graph of a very big project, small enough that a
// corrupt length prefix cannot make a reader allocate gigabytes.
const DefaultMaxFrame = 64 << 20

// ErrProtocol is wrapped by every error about malformed, oversized or
// truncated frames, and by frames that break the conversation's rules.
var ErrProtocol = errors.New("protocol error")

// Reader reads frames from a stream. It is not safe for concurrent use: one
// goroutine owns the read side of a connection.
type Reader struct {
	src   *recordingReader
	r     *bufio.Reader
	max   int
	stall time.Duration
	buf   []byte
}

// DefaultStallTimeout bounds the wait for the rest of a frame once its
// length has been read: a peer that printed a stray line of text on its
// stdout (whose first byte reads as a length) is then found out at once
// rather than at the request's deadline. Only streams with read deadlines
// (pipes from os.Pipe) can be bounded.
const DefaultStallTimeout = 10 * time.Second

// recordingReader remembers the last error of the stream itself, so that
// Read can tell a broken pipe from a malformed frame.
type recordingReader struct {
	r   io.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

type deadliner interface{ SetReadDeadline(time.Time) error }

// NewReader reads frames of at most maxFrame bytes (DefaultMaxFrame when
// maxFrame <= 0) from r.
func NewReader(r io.Reader, maxFrame int) *Reader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	src := &recordingReader{r: r}
	return &Reader{
		src:   src,
		r:     bufio.NewReaderSize(src, 64<<10),
		max:   maxFrame,
		stall: DefaultStallTimeout,
	}
}

// Read returns the next frame. At a clean end of stream (between frames) it
// returns io.EOF; every other failure wraps ErrProtocol or is the
// underlying read error.
func (r *Reader) Read() (*wirepb.Frame, error) {
	size, err := binary.ReadUvarint(r.r)
	switch {
	case err == io.EOF:
		return nil, io.EOF
	case err == io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("%w: stream ended inside a length prefix", ErrProtocol)
	case err != nil && r.src.err != nil && errors.Is(err, r.src.err):
		return nil, fmt.Errorf("reading a frame: %w", err)
	case err != nil:
		return nil, fmt.Errorf("%w: malformed length prefix: %v", ErrProtocol, err)
	case size > uint64(r.max):
		return nil, fmt.Errorf("%w: frame of %d bytes exceeds the %d-byte limit", ErrProtocol, size, r.max)
	}
	n := int(size)
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	body := r.buf[:n]
	if cap(r.buf) > 1<<20 {
		r.buf = nil // don't pin a large frame's buffer between frames
	}
	d, bounded := r.src.r.(deadliner)
	bounded = bounded && r.r.Buffered() < n && r.stall > 0
	if bounded {
		bounded = d.SetReadDeadline(time.Now().Add(r.stall)) == nil
	}
	got, err := io.ReadFull(r.r, body)
	if bounded {
		_ = d.SetReadDeadline(time.Time{})
	}
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("%w: stream ended inside a frame (%d of %d bytes)", ErrProtocol, got, n)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("%w: stalled inside a frame (%d of %d bytes in %s): not a frame?", ErrProtocol, got, n, r.stall)
	case err != nil:
		return nil, fmt.Errorf("reading a frame: %w", err)
	}
	f := &wirepb.Frame{}
	if err := proto.Unmarshal(body, f); err != nil {
		return nil, fmt.Errorf("%w: malformed frame: %v", ErrProtocol, err)
	}
	if f.GetKind() == nil {
		return nil, fmt.Errorf("%w: a frame with no content (unknown frame type?)", ErrProtocol)
	}
	return f, nil
}

// Writer writes frames to a stream. It is safe for concurrent use: a
// worker's request loop and its adapter calls write through one Writer.
type Writer struct {
	mu  sync.Mutex // guards w and buf
	w   *bufio.Writer
	buf []byte
}

// NewWriter writes frames to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10)}
}

// Write sends one frame and flushes it: a frame never waits in a buffer
// while the other side waits for it.
func (w *Writer) Write(f *wirepb.Frame) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	// Length prefix and body go out in one buffered write so the peer never
	// sees a frame half written by two goroutines.
	w.buf, err = proto.MarshalOptions{}.MarshalAppend(w.buf[:0], f)
	if err != nil {
		return fmt.Errorf("encoding %T frame: %w", f.GetKind(), err)
	}
	var lenBuf [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(lenBuf[:], uint64(len(w.buf)))
	if _, err := w.w.Write(lenBuf[:n]); err != nil {
		return err
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return err
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil // don't pin a large compile response's buffer forever
	}
	return w.w.Flush()
}
