package lsp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// fuzzConn is a connection whose input is fixed bytes and whose output is
// discarded.
type fuzzConn struct {
	io.Reader
	out bytes.Buffer
}

func (c *fuzzConn) Write(b []byte) (int, error) { return c.out.Write(b) }
func (c *fuzzConn) Close() error                { return nil }

// FuzzReadMessages feeds arbitrary bytes to the server's message reader:
// framing, JSON-RPC decoding and the error replies to bad messages must
// never panic or loop, and every message it hands on must decode into the
// parameters of its method or fail cleanly. The seed corpus is in
// testdata/fuzz/FuzzReadMessages.
func FuzzReadMessages(f *testing.F) {
	f.Add([]byte("Content-Length: 52\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\",\"x\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		conn := &fuzzConn{Reader: bytes.NewReader(data)}
		st := newStream(conn, 1<<16, slog.New(slog.DiscardHandler))
		for i := 0; i < 64; i++ {
			msg, _, err := st.Read(context.Background())
			if err != nil {
				return
			}
			var method string
			var params []byte
			switch m := msg.(type) {
			case *jsonrpc2.Call:
				method, params = m.Method(), m.Params()
			case *jsonrpc2.Notification:
				method, params = m.Method(), m.Params()
			default:
				continue
			}
			decodeFor(method, params)
		}
	})
}

// decodeFor decodes params as the server would for method.
func decodeFor(method string, params []byte) {
	var v any
	switch method {
	case protocol.MethodInitialize:
		v = &protocol.InitializeParams{}
	case protocol.MethodTextDocumentDidOpen:
		v = &protocol.DidOpenTextDocumentParams{}
	case protocol.MethodTextDocumentDidChange:
		var p protocol.DidChangeTextDocumentParams
		if protocol.Unmarshal(params, &p) == nil {
			_, _ = applyChanges([]byte("config {\n  type: \"table\"\n}\nSELECT 'é📦'\n"), p.ContentChanges)
		}
		return
	case protocol.MethodTextDocumentHover:
		v = &protocol.HoverParams{}
	case protocol.MethodWorkspaceDidChangeWatchedFiles:
		v = &protocol.DidChangeWatchedFilesParams{}
	case protocol.MethodCancelRequest:
		v = &protocol.CancelParams{}
	default:
		var p PreviewParams
		_ = decodeParams(params, &p)
		return
	}
	_ = protocol.Unmarshal(params, v)
}
