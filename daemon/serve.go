package daemon

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/dfdtools/dfd/lsp"
)

// Options configure Serve.
type Options struct {
	Version string
	// Log is the daemon's log (stderr in `dfd serve`); the LSP server also
	// forwards it to the client.
	Log *slog.Logger
	// LogLevel, when set, is the level variable of Log's handler, which
	// dfd.logLevel sets (see lsp.Options.LogLevel).
	LogLevel *slog.LevelVar
	// Backend options; Log defaults to the one above.
	Backend BackendOptions
	// Settings applied before the client's (e.g. from flags).
	Debounce        time.Duration
	MaxMessageBytes int
}

// stdio joins stdin and stdout into the connection the LSP server reads
// and writes. Closing it closes stdin when it can be closed (which unblocks
// a pending read on a pipe); stdout stays open for the process.
type stdio struct {
	io.Reader
	io.Writer
}

func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Serve runs `dfd serve`: the LSP server on in/out until the client exits
// or closes in. It returns the process exit status.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) int {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	bo := opts.Backend
	if bo.Log == nil {
		bo.Log = opts.Log
	}
	backend := NewBackend(bo)
	defer backend.Close()
	return lsp.Serve(ctx, stdio{in, out}, backend, lsp.Options{
		Name:            "dfd",
		Version:         opts.Version,
		Log:             opts.Log,
		LogLevel:        opts.LogLevel,
		Debounce:        opts.Debounce,
		MaxMessageBytes: opts.MaxMessageBytes,
	})
}
