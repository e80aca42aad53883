package lsp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

func frameOf(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

const shutdown7 = `{"jsonrpc":"2.0","id":7,"method":"shutdown"}`

// readCall reads the next message and requires it to be the call with id 7.
func readCall(t *testing.T, st *stream) {
	t.Helper()
	msg, _, err := st.Read(context.Background())
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if c, ok := msg.(*jsonrpc2.Call); !ok || c.ID() != jsonrpc2.NewNumberID(7) {
		t.Fatalf("read %#v, want the call with id 7", msg)
	}
}

// The warning after a resync says how many bytes were thrown away.
func TestStreamLogsSkippedBytes(t *testing.T) {
	for _, tc := range []struct {
		name, bad string
		skipped   int
	}{
		{"garbage", "\x00\xff}{garbage", 11},
		{"header line without colon", "Content-Type utf8\r\n", 19},
		{"rest of a short body", "}\r\n", 3},
		{"bad length", "Content-Length: 1x\r\n\r\n", 22},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			conn := &fuzzConn{Reader: strings.NewReader(tc.bad + frameOf(shutdown7))}
			st := newStream(conn, 1<<16, slog.New(slog.NewTextHandler(&logs, nil)))
			readCall(t, st)
			if want := fmt.Sprintf("skippedBytes=%d", tc.skipped); !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %s:\n%s", want, logs.String())
			}
		})
	}
}

// repeatReader yields n copies of b.
type repeatReader struct {
	b byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= int64(k)
	return k, nil
}

// Scanning past garbage drops it as it goes: 64 MiB of it, without a line
// break, cost no more than a few buffers.
func TestStreamScanIsBounded(t *testing.T) {
	const garbage = 64 << 20
	in := io.MultiReader(&repeatReader{'x', garbage}, strings.NewReader(frameOf(shutdown7)))
	st := newStream(&fuzzConn{Reader: in}, 1<<16, slog.New(slog.DiscardHandler))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	readCall(t, st)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("scanning %d bytes of garbage allocated %d bytes", garbage, alloc)
	}
}
