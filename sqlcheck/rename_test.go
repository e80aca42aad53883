package sqlcheck

import (
	"fmt"
	"testing"
)

// The words of a partitionBy expression a rename changes: the whole
// expression or a function's first argument, not a function of the same
// name, in any case; other words of the name are unsure.
func TestColumnWords(t *testing.T) {
	cases := []struct {
		sql, column  string
		want, unsure string
	}{
		{"DATE(ordered_at)", "ordered_at", "[{5 15}]", "[]"},
		{" ordered_at ", "ORDERED_AT", "[{1 11}]", "[]"},
		{"DATE(date)", "date", "[{5 9}]", "[]"},
		{"TIMESTAMP_TRUNC(ordered_at, DAY)", "day", "[]", "[{28 31}]"},
		{"TIMESTAMP_TRUNC(day, DAY)", "day", "[{16 19}]", "[{21 24}]"},
		{"DATE(ordered_at)", "order", "[]", "[]"},
		{"'ordered_at'", "ordered_at", "[]", "[]"},
	}
	for _, tc := range cases {
		sure, unsure := columnWords(tc.sql, tc.column)
		if got, gotU := fmt.Sprint(sure), fmt.Sprint(unsure); got != tc.want || gotU != tc.unsure {
			t.Errorf("columnWords(%q, %q) = %s, %s; want %s, %s", tc.sql, tc.column, got, gotU, tc.want, tc.unsure)
		}
	}
}

// Statements whose analysis declares something are not analysed a second
// time for a rename.
func TestDeclares(t *testing.T) {
	for sql, want := range map[string]bool{
		"CREATE TEMP FUNCTION f(x INT64) AS (x)":             true,
		"DECLARE since DATE DEFAULT CURRENT_DATE()":          true,
		"create or replace temporary table t AS SELECT 1":    true,
		"-- note\nCREATE TEMP TABLE t AS SELECT 1":           true,
		"CREATE TABLE d.t AS SELECT 1":                       false,
		"SELECT 1 AS temp":                                   false,
		"CREATE OR REPLACE TABLE d.t AS SELECT 1 AS temp_id": false,
	} {
		if got := declares(sql); got != want {
			t.Errorf("declares(%q) = %v, want %v", sql, got, want)
		}
	}
}

// The edits of a statement, an insertion after a name among them.
func TestApplyStmtEdits(t *testing.T) {
	sql := "SELECT customer_id, a FROM t WHERE customer_id > 0"
	got := applyStmtEdits(sql, []stmtEdit{
		{start: 35, end: 46, text: "buyer_id"},
		{start: 7, end: 18, text: "buyer_id AS customer_id"},
		{start: 20, end: 21, text: " AS b", insert: true},
	})
	if want := "SELECT buyer_id AS customer_id, a AS b FROM t WHERE buyer_id > 0"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
