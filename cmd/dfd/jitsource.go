package main

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// jitJSON is the JitCompilationResponse as protobuf JSON in one fixed
// layout: protojson's own spacing varies from build to build on purpose,
// so its output is re-indented (two spaces, ": " after keys), then ends
// with a newline.
func jitJSON(resp *dataformpb.JitCompilationResponse) ([]byte, error) {
	b, err := protojson.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// lazyBigQuery is the BigQuery backend of `dfd jit`, opened on the JiT
// code's first database call rather than before the preview: code that
// makes none needs no credentials. When opening fails, every call fails
// with that error (FAILED_PRECONDITION), which open has already reported.
// It offers the dry-run verdicts and the query cache of the backend, which
// the preview policy asks for.
type lazyBigQuery struct {
	open func(context.Context) (*connect.Backend, error)

	once    sync.Once
	backend *connect.Backend
	err     error
}

func (l *lazyBigQuery) get(ctx context.Context) (*connect.Backend, error) {
	l.once.Do(func() {
		l.backend, l.err = l.open(ctx)
		if l.err != nil {
			l.err = &adapters.Error{Code: adapters.FailedPrecondition, Message: l.err.Error()}
		}
	})
	return l.backend, l.err
}

// Close closes the backend if it was opened.
func (l *lazyBigQuery) Close() error {
	l.once.Do(func() {}) // no opening after this
	if l.backend != nil {
		return l.backend.Close()
	}
	return nil
}

func (l *lazyBigQuery) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	b, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return b.Cache.Execute(ctx, req)
}

func (l *lazyBigQuery) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	b, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return b.Cache.ListTables(ctx, req)
}

func (l *lazyBigQuery) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	b, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return b.Cache.GetTable(ctx, req)
}

func (l *lazyBigQuery) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	b, err := l.get(ctx)
	if err != nil {
		return err
	}
	return b.Cache.DeleteTable(ctx, req)
}

// Verify is the backend's dry-run verdict (adapters.Verifier).
func (l *lazyBigQuery) Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	b, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return b.Cache.Verify(ctx, req)
}

// CachedExecute answers from the backend's query cache
// (adapters.QueryCache).
func (l *lazyBigQuery) CachedExecute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, bool) {
	b, err := l.get(ctx)
	if err != nil {
		return nil, false
	}
	return b.Cache.CachedExecute(ctx, req)
}

var (
	_ adapters.DbAdapter  = (*lazyBigQuery)(nil)
	_ adapters.Verifier   = (*lazyBigQuery)(nil)
	_ adapters.QueryCache = (*lazyBigQuery)(nil)
)
