package highlight

import (
	"os"
	"path/filepath"
	"testing"
)

// The function list is a copy of gsql's (gsql/gen/bqfunctions writes
// it): regenerating gsql's must be followed by copying it here.
func TestFunctionListIsGsqls(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "gsql", "bigquery_functions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != bigqueryFunctions {
		t.Errorf("source/highlight/bigquery_functions.txt differs from gsql/bigquery_functions.txt: cp gsql/bigquery_functions.txt source/highlight/")
	}
	if !functionSet["COUNT"] || !functionSet["NET.HOST"] || functionSet["SELECT"] {
		t.Errorf("the function set is not BigQuery's functions")
	}
}
