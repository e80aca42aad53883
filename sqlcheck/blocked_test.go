package sqlcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// failingSource is a metadata source that cannot answer (a unit-test
// stand-in: the command's tests use the recording BigQuery stand-in).
type failingSource struct {
	adapters.DbAdapter // nil: only the metadata calls are made
	err                error
	cached             map[string]*dataformpb.TableMetadata // CachedTable's answers, by schema.name
}

func (f *failingSource) GetTable(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	return nil, f.err
}

func (f *failingSource) ListTables(context.Context, *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	return nil, f.err
}

// skipChainGraph is a warehouse table read by a, a read by b, b by c.
func skipChainGraph() *dataformpb.CompiledGraph {
	view := func(name, query string, deps ...string) *dataformpb.Table {
		t := &dataformpb.Table{Target: &dataformpb.Target{Database: "p", Schema: "d", Name: name}, FileName: "definitions/" + name + ".sqlx",
			EnumType: dataformpb.TableType_VIEW, Query: query}
		for _, d := range deps {
			t.DependencyTargets = append(t.DependencyTargets, &dataformpb.Target{Database: "p", Schema: "d", Name: d})
		}
		return t
	}
	return &dataformpb.CompiledGraph{
		ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "p"},
		Declarations:  []*dataformpb.Declaration{{Target: &dataformpb.Target{Database: "p", Schema: "raw", Name: "src"}}},
		Tables: []*dataformpb.Table{
			view("a", "SELECT id FROM `p.raw.src`"),
			view("b", "SELECT id FROM `p.d.a`", "a"),
			view("c", "SELECT id FROM `p.d.b`", "b"),
			view("own", "SELECT 1 AS id"),
		},
	}
}

// Every statement not analysed is charged to its root cause, downstream
// ones included, and a downstream hint says its upstream was not analysed
// either, and why — not that it is "a JiT action, or one with a problem of
// its own".
func TestCheckChargesRootCause(t *testing.T) {
	refused := adapters.Errorf(adapters.Unauthenticated, "GetTable(p.raw.src): Request had invalid authentication credentials.")
	for _, tc := range []struct {
		name      string
		source    adapters.DbAdapter
		cause     Cause
		upstream  string // in c's hint
		downright string // in a's hint
	}{
		{"refused", &failingSource{err: refused}, CauseUnanswered, "the metadata source could not answer about p.raw.src",
			"whose schema dfd could not get (the metadata source could not answer: UNAUTHENTICATED: GetTable(p.raw.src): Request had invalid authentication credentials.)"},
		{"none", nil, CauseNoMetadata, "p.raw.src's schema is unknown: there is no metadata source", "whose schema dfd does not know (give dfd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(context.Background(), skipChainGraph(), Options{Metadata: tc.source})
			if err != nil {
				t.Fatal(err)
			}
			if res.Analysed != 1 || res.Skipped != 3 {
				t.Errorf("analysed %d, skipped %d; want 1, 3", res.Analysed, res.Skipped)
			}
			if len(res.NotAnalysed) != 1 {
				t.Fatalf("causes %+v, want one", res.NotAnalysed)
			}
			b := res.NotAnalysed[0]
			if b.Cause != tc.cause || b.Table != "p.raw.src" || b.Statements != 3 {
				t.Errorf("cause %+v, want %s of p.raw.src for 3 statements", b, tc.cause)
			}
			if tc.cause == CauseUnanswered && adapters.CodeOf(b.Err) != adapters.Unauthenticated {
				t.Errorf("cause error %v, want the source's", b.Err)
			}
			hints := map[string]string{}
			for _, f := range res.Findings {
				hints[f.File] = f.Message
			}
			if h := hints["definitions/c.sqlx"]; !strings.Contains(h, "it reads p.d.b, which dfd did not analyse either: "+tc.upstream) {
				t.Errorf("c's hint %q", h)
			}
			if h := hints["definitions/a.sqlx"]; !strings.Contains(h, tc.downright) {
				t.Errorf("a's hint %q, want %q in it", h, tc.downright)
			}
			for file, h := range hints {
				if strings.Contains(h, "a JiT action, or one with a problem") {
					t.Errorf("%s: %q", file, h)
				}
			}
		})
	}
}

// Once the time allowed for metadata is spent, a caching source still
// answers from what it holds: the check uses it rather than leave the
// table unknown.
func TestCheckUsesCacheAfterDeadline(t *testing.T) {
	src := &failingSource{err: adapters.Errorf(adapters.Unavailable, "no answer"), cached: map[string]*dataformpb.TableMetadata{
		"raw.src": {Target: &dataformpb.Target{Database: "p", Schema: "raw", Name: "src"},
			Fields: []*dataformpb.Field{{Name: "id", Type: &dataformpb.Field_Primitive_{Primitive: dataformpb.Field_INTEGER}}}},
	}}
	res, err := Check(context.Background(), skipChainGraph(), Options{Metadata: (*cachingSource)(src), MetadataTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Analysed != 4 || res.Skipped != 0 || len(res.NotAnalysed) != 0 {
		t.Errorf("analysed %d, skipped %d, causes %+v; want every statement analysed from the cache", res.Analysed, res.Skipped, res.NotAnalysed)
	}
}

type cachingSource failingSource

func (c *cachingSource) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	return (*failingSource)(c).GetTable(ctx, req)
}

func (c *cachingSource) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	return (*failingSource)(c).ListTables(ctx, req)
}

func (c *cachingSource) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	return nil, c.err
}

func (c *cachingSource) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	return c.err
}

func (c *cachingSource) CachedTable(_ context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, bool, error) {
	m, ok := c.cached[req.GetTarget().GetSchema()+"."+req.GetTarget().GetName()]
	return m, ok, nil
}

// The SQL of a view, table, incremental table or assertion must be a
// query: another statement is an error, found without any schema. An
// operation runs any statement.
func TestCheckQueryKindOffline(t *testing.T) {
	g := &dataformpb.CompiledGraph{
		ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "p"},
		Tables: []*dataformpb.Table{
			{Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "v"}, FileName: "definitions/v.sqlx",
				EnumType: dataformpb.TableType_VIEW, Query: "DELETE FROM `p.raw.src` WHERE TRUE"},
			{Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "ok"}, FileName: "definitions/ok.sqlx",
				EnumType: dataformpb.TableType_TABLE, Query: "WITH x AS (SELECT 1 AS a) SELECT a FROM x;\n"},
		},
		Operations: []*dataformpb.Operation{{Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "op"}, FileName: "definitions/op.sqlx",
			Queries: []string{"DELETE FROM `p.raw.src` WHERE TRUE"}}},
	}
	res, err := Check(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs := 0
	for _, f := range res.Findings {
		if f.Severity != Error {
			continue
		}
		errs++
		if f.File != "definitions/v.sqlx" || f.Code != CodeNotAQuery || !strings.Contains(f.Message, "the SQL of a view must be a query") || !strings.Contains(f.Message, "DELETE") {
			t.Errorf("error %+v", f)
		}
	}
	if errs != 1 {
		t.Errorf("%d errors, want the view's one: %+v", errs, res.Findings)
	}
}
