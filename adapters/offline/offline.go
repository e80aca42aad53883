// Package offline is a DbAdapter that answers from a metadata snapshot file,
// so JiT previews work without credentials or network.
//
// # Snapshot file format
//
// A snapshot is one JSON object:
//
//	{
//	  "tables": [ TableMetadata, … ],
//	  "queries": [
//	    { "statement": "SELECT …", "response": ExecuteResponse },
//	    …
//	  ],
//	  "datasets": [ {"database": "acme", "schema": "clicks"}, … ]
//	}
//
// "datasets" names the datasets whose every table the snapshot lists (dfd
// metadata snapshot writes the datasets it listed): a table missing from
// one of them does not exist, as far as the snapshot knows. A table of any
// other dataset that the snapshot lacks may simply not have been written
// down. Either way GetTable answers NOT_FOUND (JiT code sees what it would
// see in a project without the table); [Adapter.Lists] tells them apart.
//
// TableMetadata and ExecuteResponse are the messages of Dataform's
// db_adapter.proto and jit.proto in protobuf's canonical JSON form
// (protojson): lowerCamelCase field names (the proto names such as
// "last_updated_millis" are accepted too), enums by name ("VIEW",
// "REPEATED", "STRING"), int64 values as strings or numbers. Unknown fields
// are errors, so a typo does not silently drop data. For example:
//
//	{"tables": [{
//	  "target": {"database": "acme", "schema": "clicks", "name": "daily_clicks"},
//	  "type": "TABLE",
//	  "description": "Clicks per day",
//	  "labels": {"team": "growth"},
//	  "lastUpdatedMillis": "1718000000000",
//	  "fields": [
//	    {"name": "click_date", "primitive": "DATE"},
//	    {"name": "tags", "primitive": "STRING", "flags": ["REPEATED"]},
//	    {"name": "geo", "struct": {"fields": [{"name": "country", "primitive": "STRING"}]}}
//	  ]
//	}],
//	"queries": [{
//	  "statement": "SELECT COUNT(*) AS n FROM `acme.clicks.daily_clicks`",
//	  "response": {
//	    "schemaFields": [{"name": "n", "primitive": "INTEGER"}],
//	    "rows": [{"f": [{"v": "42"}]}]
//	  }
//	}]}
//
// Rows are BigQuery's raw REST form, as the Dataform CLI returns them: one
// google.protobuf.Struct per row, {"f": [{"v": value}, …]} with values as
// BigQuery encodes them (numbers as strings, RECORD as nested {"f": …},
// REPEATED as [{"v": …}, …], NULL as null).
//
// # Answers
//
//   - GetTable: the table whose target matches database, schema and name
//     exactly (an empty database means Options.DefaultDatabase); otherwise a
//     NOT_FOUND error naming the target.
//   - ListTables: the tables of exactly the requested database and, when
//     set, schema (an empty schema lists every dataset of the database, as
//     the CLI's BigQuery adapter does), sorted by schema and name. An empty
//     database means Options.DefaultDatabase; with no default it is an
//     INVALID_ARGUMENT error, never "every project".
//   - Execute: the query whose statement equals the request's after
//     whitespace normalisation (see [NormalizeStatement]); query parameters
//     are not part of the match. row_limit caps the rows; dry runs return no
//     rows (schema and metadata only). fetch_results is ignored, as the
//     Dataform CLI ignores it: JiT code that leaves it unset gets rows under
//     `dataform run`, so it must get them in a preview too. A statement not
//     in the snapshot is a FAILED_PRECONDITION error
//     ("statement not in snapshot <file>: <first 80 characters>"), except in
//     a dry run, which answers an empty response: the snapshot cannot
//     validate SQL, and a dry run is not expected to return anything.
//   - DeleteTable: nothing is ever deleted; PERMISSION_DENIED. (The preview
//     policy refuses or skips DeleteTable before it gets here.)
//
// Tables without a database get Options.DefaultDatabase when loading; two
// tables with the same target, or two queries with the same normalised
// statement, are load errors.
package offline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Options configure an Adapter.
type Options struct {
	// DefaultDatabase is the project that targets and ListTables requests
	// without a database refer to (the workflow's defaultProject).
	DefaultDatabase string
}

// Adapter answers DbAdapter calls from a loaded snapshot. It never changes
// after loading, so it is safe for concurrent use.
type Adapter struct {
	name      string // file name for messages
	defaultDB string

	tables   map[key]*dataformpb.TableMetadata
	sorted   []*dataformpb.TableMetadata // by database, schema, name
	queries  map[string]*dataformpb.ExecuteResponse
	complete map[dataset]bool // datasets listed in full
}

type key struct{ database, schema, name string }

// Load reads the snapshot file at path.
func Load(path string, opts Options) (*Adapter, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("offline snapshot %s does not exist", path)
	}
	if err != nil {
		return nil, fmt.Errorf("offline snapshot: %w", err)
	}
	return Parse(path, data, opts)
}

// Parse reads a snapshot from data; name (usually the file name) appears in
// error messages.
func Parse(name string, data []byte, opts Options) (*Adapter, error) {
	snap, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("offline snapshot %s: %w", name, err)
	}
	a := &Adapter{
		name:      name,
		defaultDB: opts.DefaultDatabase,
		tables:    make(map[key]*dataformpb.TableMetadata, len(snap.tables)),
		queries:   make(map[string]*dataformpb.ExecuteResponse, len(snap.queries)),
	}
	for i, t := range snap.tables {
		tg := t.GetTarget()
		if tg.GetSchema() == "" || tg.GetName() == "" {
			return nil, fmt.Errorf("offline snapshot %s: tables[%d]: target needs a schema and a name", name, i)
		}
		if tg.GetDatabase() == "" {
			if a.defaultDB == "" {
				return nil, fmt.Errorf("offline snapshot %s: tables[%d] (%s): target has no database and no default database is set",
					name, i, adapters.TargetString(tg))
			}
			tg.Database = a.defaultDB
		}
		k := key{tg.GetDatabase(), tg.GetSchema(), tg.GetName()}
		if _, dup := a.tables[k]; dup {
			return nil, fmt.Errorf("offline snapshot %s: tables[%d]: %s appears twice", name, i, adapters.TargetString(tg))
		}
		a.tables[k] = t
		a.sorted = append(a.sorted, t)
	}
	slices.SortFunc(a.sorted, func(x, y *dataformpb.TableMetadata) int {
		return strings.Compare(adapters.TargetString(x.GetTarget()), adapters.TargetString(y.GetTarget()))
	})
	for i, q := range snap.queries {
		stmt := NormalizeStatement(q.statement)
		if stmt == "" {
			return nil, fmt.Errorf("offline snapshot %s: queries[%d]: empty statement", name, i)
		}
		if _, dup := a.queries[stmt]; dup {
			return nil, fmt.Errorf("offline snapshot %s: queries[%d]: statement appears twice: %s", name, i, abbreviate(stmt))
		}
		if q.response == nil {
			q.response = &dataformpb.ExecuteResponse{}
		}
		a.queries[stmt] = q.response
	}
	a.complete = make(map[dataset]bool, len(snap.datasets))
	for _, d := range snap.datasets {
		if d.database == "" {
			if a.defaultDB == "" {
				return nil, fmt.Errorf("offline snapshot %s: dataset %s has no database and no default database is set", name, d.schema)
			}
			d.database = a.defaultDB
		}
		a.complete[d] = true
	}
	return a, nil
}

// Name is the snapshot's file name, as given to Load or Parse.
func (a *Adapter) Name() string { return a.name }

// Lists reports whether the snapshot lists every table of dataset
// database.schema (its "datasets"): whether a table it lacks there is known
// not to exist.
func (a *Adapter) Lists(database, schema string) bool {
	if database == "" {
		database = a.defaultDB
	}
	return a.complete[dataset{database, schema}]
}

// Unbilled implements adapters.Unbilled: answers come from a file.
func (a *Adapter) Unbilled() {}

// NormalizeStatement is the form statements are matched in: leading and
// trailing white space removed and every run of white space (spaces, tabs,
// newlines, including inside string literals) replaced by one space. Case,
// comments and semicolons are kept as they are.
func NormalizeStatement(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (a *Adapter) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	dryRun := req.GetBigQueryOptions().GetDryRun()
	stmt := NormalizeStatement(req.GetStatement())
	stored, ok := a.queries[stmt]
	switch {
	case !ok && dryRun:
		adapters.Note(ctx, "offline: statement not in snapshot %s; dry run answered with an empty response", a.name)
		return &dataformpb.ExecuteResponse{}, nil
	case !ok:
		return nil, adapters.Errorf(adapters.FailedPrecondition, "statement not in snapshot %s: %s", a.name, abbreviate(stmt))
	}

	out := &dataformpb.ExecuteResponse{
		ExecutionMetadata: stored.GetExecutionMetadata(),
		Errors:            stored.GetErrors(),
		SchemaFields:      stored.GetSchemaFields(),
	}
	if !dryRun {
		rows := stored.GetRows()
		if n := req.GetRowLimit(); n > 0 && int64(len(rows)) > n {
			rows = rows[:n]
		}
		out.Rows = rows
	}
	// The snapshot is shared by every call: hand out a copy.
	return proto.Clone(out).(*dataformpb.ExecuteResponse), nil
}

func (a *Adapter) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	db := req.GetDatabase()
	if db == "" {
		if a.defaultDB == "" {
			return nil, adapters.Errorf(adapters.InvalidArgument, "ListTablesRequest.database must be supplied (offline snapshot %s has no default database)", a.name)
		}
		db = a.defaultDB
		adapters.Note(ctx, "offline: no database in ListTables request; listing default database %s", db)
	}
	schema := req.GetSchema()
	out := &dataformpb.ListTablesResponse{}
	for _, t := range a.sorted {
		tg := t.GetTarget()
		if tg.GetDatabase() == db && (schema == "" || tg.GetSchema() == schema) {
			out.Tables = append(out.Tables, proto.Clone(t).(*dataformpb.TableMetadata))
		}
	}
	return out, nil
}

func (a *Adapter) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	tg := req.GetTarget()
	if tg == nil {
		return nil, adapters.Errorf(adapters.InvalidArgument, "GetTableRequest.target must be supplied")
	}
	db := tg.GetDatabase()
	if db == "" {
		db = a.defaultDB
	}
	t, ok := a.tables[key{db, tg.GetSchema(), tg.GetName()}]
	if !ok {
		return nil, adapters.Errorf(adapters.NotFound, "table %s not found in offline snapshot %s",
			adapters.TargetString(&dataformpb.Target{Database: db, Schema: tg.GetSchema(), Name: tg.GetName()}), a.name)
	}
	return proto.Clone(t).(*dataformpb.TableMetadata), nil
}

func (a *Adapter) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	return adapters.Errorf(adapters.PermissionDenied, "DeleteTable(%s): offline snapshot %s is read-only",
		adapters.TargetString(req.GetTarget()), a.name)
}

// abbreviate keeps the first 80 characters of a (normalised) statement for
// error messages.
func abbreviate(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:max]), unicode.IsSpace) + "…"
}
