package daemon

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/settings"
	"github.com/dfdtools/dfd/workspace"
)

type requestKey struct{}

// slowBigQuery answers GetTable once its gate opens (or its context
// ends), and records whether any call carried a request's context.
type slowBigQuery struct {
	adapters.UnimplementedAdapter
	gate chan struct{}

	mu             sync.Mutex
	calls          int
	onRequestPath  bool // a call's context carried requestKey
	cancelledCalls int
}

func (b *slowBigQuery) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	b.mu.Lock()
	b.calls++
	if ctx.Value(requestKey{}) != nil {
		b.onRequestPath = true
	}
	b.mu.Unlock()
	select {
	case <-b.gate:
	case <-ctx.Done():
		b.mu.Lock()
		b.cancelledCalls++
		b.mu.Unlock()
		return nil, adapters.AsError(ctx.Err())
	}
	return &dataformpb.TableMetadata{Target: req.GetTarget(), Fields: []*dataformpb.Field{
		{Name: "country", Type: &dataformpb.Field_Primitive_{Primitive: dataformpb.Field_STRING}},
	}}, nil
}

type nopRunner struct{}

func (nopRunner) Compile(context.Context, CompileJob) (*compile.Result, error) { return nil, nil }
func (nopRunner) Jit(context.Context, engine.RPC, jit.JitJob) ([]byte, error) {
	return nil, nil
}
func (nopRunner) Close() error { return nil }

// bigQueryProject is an opened project whose metadata source is BigQuery
// behind the metadata cache, with bq standing in for BigQuery.
func bigQueryProject(t *testing.T, bq adapters.DbAdapter) *openProject {
	t.Helper()
	b := NewBackend(BackendOptions{})
	t.Cleanup(func() { _ = b.Close() })
	b.settings = settings.Settings{MetadataSource: SourceBigQuery}
	op := &openProject{b: b, p: &project.Project{Root: t.TempDir()}, runner: nopRunner{}}
	op.bg.init(b.bgCtx)
	op.bq = &bqConn{b: &connect.Backend{
		Cache:       cache.Open(bq, cache.Options{DefaultDatabase: "p"}),
		Credentials: &credentials.Resolved{Project: "p", DefaultDatabase: "p"},
	}}
	t.Cleanup(func() { _ = op.Close() })
	return op
}

// TableMetadata (hovers, column completion) answers from the metadata
// cache alone: a table it does not have is fetched in the background,
// never with the request's context, and the next request has it.
func TestTableMetadataNeverWaitsForBigQuery(t *testing.T) {
	bq := &slowBigQuery{gate: make(chan struct{})}
	op := bigQueryProject(t, bq)
	target := workspace.Target{Database: "p", Schema: "landing", Name: "raw_clicks"}
	ctx := context.WithValue(context.Background(), requestKey{}, true)
	if info, ok := op.TableMetadata(ctx, target); ok {
		t.Fatalf("metadata before BigQuery answered: %+v", info)
	}
	close(bq.gate)
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, ok := op.TableMetadata(ctx, target)
		if ok {
			if len(info.Columns) != 1 || info.Columns[0].Name != "country" || info.Source != "BigQuery" {
				t.Errorf("metadata %+v", info)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background fetch never filled the cache")
		}
		time.Sleep(5 * time.Millisecond)
	}
	bq.mu.Lock()
	defer bq.mu.Unlock()
	if bq.onRequestPath {
		t.Error("BigQuery was asked with the request's context: the request waited for it")
	}
	if bq.calls != 1 {
		t.Errorf("BigQuery was asked %d times, want 1 (one fetch per table)", bq.calls)
	}
}

// The background fetches belong to the project: closing it stops them.
func TestTableMetadataFetchesStopWithTheProject(t *testing.T) {
	bq := &slowBigQuery{gate: make(chan struct{})} // never opened
	op := bigQueryProject(t, bq)
	for _, name := range []string{"a", "b", "c"} {
		op.TableMetadata(context.Background(), workspace.Target{Database: "p", Schema: "s", Name: name})
	}
	for {
		bq.mu.Lock()
		n := bq.calls
		bq.mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := op.Close(); err != nil { // returns once they have stopped
		t.Fatal(err)
	}
	bq.mu.Lock()
	defer bq.mu.Unlock()
	if bq.cancelledCalls != 3 {
		t.Errorf("%d of 3 fetches were cancelled by Close", bq.cancelledCalls)
	}
	op.TableMetadata(context.Background(), workspace.Target{Database: "p", Schema: "s", Name: "d"})
	if bq.calls != 3 {
		t.Error("a closed project started a fetch")
	}
}
