package adapters

import (
	"context"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// DbAdapter is the DbAdapter service of Dataform's jit.proto, as Go.
//
// Implementations must be safe for concurrent use: several JiT requests (and
// several calls of one request, via Promise.all) run at the same time.
// Returned messages belong to the caller.
type DbAdapter interface {
	// Execute runs one SQL statement (or script). Rows are BigQuery's raw
	// REST form ({"f":[{"v":…}]}) as google.protobuf.Struct, with
	// schema_fields describing them. row_limit caps the rows returned,
	// byte_limit the bytes billed; fetch_results=false returns no rows.
	Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error)

	// ListTables lists the tables of the request's database (project) and,
	// when set, schema (dataset).
	ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error)

	// GetTable returns the metadata of one table. A missing table is a
	// NOT_FOUND error, never an empty TableMetadata.
	GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error)

	// DeleteTable drops a table.
	DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error
}

// UnimplementedAdapter answers every method with an UNIMPLEMENTED error.
// Embed it in adapters that serve only some methods (test fakes, partial
// backends) so they still satisfy DbAdapter.
type UnimplementedAdapter struct{}

func (UnimplementedAdapter) Execute(context.Context, *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	return nil, Errorf(Unimplemented, "Execute is not supported by this adapter")
}

func (UnimplementedAdapter) ListTables(context.Context, *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	return nil, Errorf(Unimplemented, "ListTables is not supported by this adapter")
}

func (UnimplementedAdapter) GetTable(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	return nil, Errorf(Unimplemented, "GetTable is not supported by this adapter")
}

func (UnimplementedAdapter) DeleteTable(context.Context, *dataformpb.DeleteTableRequest) error {
	return Errorf(Unimplemented, "DeleteTable is not supported by this adapter")
}

// TargetString formats a target the way BigQuery names tables:
// "database.schema.name", or "schema.name" when the database is empty.
// A nil target is "<no target>".
func TargetString(t *dataformpb.Target) string {
	if t == nil {
		return "<no target>"
	}
	if t.GetDatabase() == "" {
		return t.GetSchema() + "." + t.GetName()
	}
	return t.GetDatabase() + "." + t.GetSchema() + "." + t.GetName()
}
