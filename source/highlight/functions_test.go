package highlight

import (
	"os"
	"path/filepath"
	"testing"
)

// The function list is gsql's: gsql/gen/bqfunctions writes both, and its
// -check (scripts/test.sh) fails when either is stale; this test says so
// without the generator's npm input.
func TestFunctionListIsGsqls(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "gsql", "bigquery_functions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != bigqueryFunctions {
		t.Errorf("source/highlight/bigquery_functions.txt differs from gsql/bigquery_functions.txt: go run ./gsql/gen/bqfunctions")
	}
	if !functionSet["COUNT"] || !functionSet["NET.HOST"] || functionSet["SELECT"] {
		t.Errorf("the function set is not BigQuery's functions")
	}
}
