package adapters

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Column is a column as BigQuery describes it (a TableFieldSchema): its
// type by BigQuery's own name (INTEGER, FLOAT, NUMERIC, BIGNUMERIC, JSON,
// RECORD, …), unlike dataformpb.Field, which folds some types together the
// way the Dataform CLI does. Data previews show these.
type Column struct {
	Name string `json:"name"`
	// Type is BigQuery's type name: STRING, BYTES, INTEGER, FLOAT,
	// NUMERIC, BIGNUMERIC, BOOLEAN, TIMESTAMP, DATE, TIME, DATETIME,
	// INTERVAL, GEOGRAPHY, JSON, RANGE, RECORD (a STRUCT).
	Type string `json:"type"`
	// Mode is NULLABLE, REQUIRED or REPEATED (an ARRAY of Type).
	Mode        string    `json:"mode,omitempty"`
	Description string    `json:"description,omitempty"`
	Fields      []*Column `json:"fields,omitempty"` // a RECORD's fields
}

// TableRows are rows of a table read without a query (tabledata.list).
type TableRows struct {
	Target *dataformpb.Target
	// Type is BigQuery's table type: TABLE, VIEW, MATERIALIZED_VIEW,
	// EXTERNAL, SNAPSHOT.
	Type    string
	Columns []*Column
	// Rows are BigQuery's raw rows ({"f":[{"v":…}]}), as Execute returns
	// them.
	Rows []*structpb.Struct
	// TotalRows is how many rows the table holds.
	TotalRows int64
	// Location is the dataset's location ("US", "EU", "europe-west1").
	Location string
}

// RowReader is implemented by backends that can read a table's rows
// without running a query (BigQuery's tabledata.list, which bills
// nothing). A missing table is NOT_FOUND; a table whose rows cannot be
// listed (a view) is FAILED_PRECONDITION.
type RowReader interface {
	TableRows(ctx context.Context, target *dataformpb.Target, limit int64) (*TableRows, error)
}
