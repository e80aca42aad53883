package gsql

import (
	"context"
	"strings"
	"testing"
)

// The rules by which Analyze skips what GoogleSQL's open-source analyzer
// rejects but BigQuery accepts, each found by the false-alarm corpus
// (falsealarm_test.go), and the real errors next to them that must stay
// errors.

// GoogleSQL's [at L:C] columns count code points and expand tabs to stops
// of 8; its lines end at \n, \r\n and a lone \r. sqlcheck maps positions
// back to source bytes on this assumption.
func TestProblemColumnsAreCodePointsWithTabStops(t *testing.T) {
	c := testCatalog(t)
	for _, tc := range []struct {
		sql       string
		line, col int
	}{
		{"SELECT\torder_idd FROM `proj.sales.orders`", 1, 9},
		{"SELECT 'é', order_idd FROM `proj.sales.orders`", 1, 13},           // 14 in bytes
		{"SELECT '🙂', order_idd FROM `proj.sales.orders`", 1, 13},           // 16 in bytes
		{"SELECT 'ab',\torder_idd FROM `proj.sales.orders`", 1, 17},         // a tab from column 13
		{"SELECT\t'Größe → 🙂',\torder_idd FROM `proj.sales.orders`", 1, 25}, // 28 in bytes, 21 code points
		{"SELECT 1,\n  'ü',\t\torder_idd FROM `proj.sales.orders`", 2, 17},
		{"SELECT 1,\r\n  order_idd FROM `proj.sales.orders`", 2, 3},
		{"SELECT 1,\r  order_idd FROM `proj.sales.orders`", 2, 3},
		{"SELECT '\u2028', order_idd FROM `proj.sales.orders`", 1, 13}, // no line break inside a string
	} {
		a, err := c.Analyze(context.Background(), tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		if a.Problem == nil || a.Problem.Kind != UnknownColumn || a.Problem.Line != tc.line || a.Problem.Column != tc.col {
			t.Errorf("%q: %+v (skipped %q), want unknown-column at %d:%d", tc.sql, a.Problem, a.Skipped, tc.line, tc.col)
		}
	}
}

// skipRuleCase is a statement sequence analysed on one catalog; the last
// statement must be skipped with a reason containing skipped, or, when
// skipped is empty, report a problem of kind.
type skipRuleCase struct {
	script  []string
	skipped string
	kind    ErrorKind
}

func checkSkipRules(t *testing.T, cases []skipRuleCase) {
	t.Helper()
	for _, tc := range cases {
		c := testCatalog(t)
		var a Analysis
		for _, sql := range tc.script {
			var err error
			if a, err = c.Analyze(context.Background(), sql); err != nil {
				t.Fatal(err)
			}
		}
		last := tc.script[len(tc.script)-1]
		switch {
		case tc.skipped != "":
			if a.Problem != nil || !strings.Contains(a.Skipped, tc.skipped) {
				t.Errorf("%q: problem %+v skipped %q, want skipped with %q", last, a.Problem, a.Skipped, tc.skipped)
			}
		case tc.kind == "":
			if a.Problem != nil || a.Skipped != "" {
				t.Errorf("%q: problem %+v skipped %q, want analysed clean", last, a.Problem, a.Skipped)
			}
		default:
			if a.Problem == nil || a.Problem.Kind != tc.kind {
				t.Errorf("%q: problem %+v skipped %q, want %s", last, a.Problem, a.Skipped, tc.kind)
			}
		}
	}
}

// BigQuery's system variables resolve; setting the default dataset skips
// the statement (sqlcheck then analyses no unqualified table name after it
// against no dataset); one dfd does not know is never an error.
func TestSystemVariables(t *testing.T) {
	checkSkipRules(t, []skipRuleCase{
		{script: []string{"SELECT @@project_id, @@session_id, @@script.bytes_processed, @@row_count + 1, @@error.stack_trace[SAFE_OFFSET(0)].line"}},
		{script: []string{"SET @@query_label = 'team:data'"}},
		{script: []string{"SET @@time_zone = 'America/New_York'"}},
		{script: []string{"SET @@dataset_id = 'sales'"}, skipped: "it sets @@dataset_id"},
		{script: []string{"SET @@dataset_project_id = 'proj'"}, skipped: "it sets @@dataset_project_id"},
		{script: []string{"SELECT @@some_future_variable"}, skipped: "system variable @@some_future_variable"},
		// Real errors stay errors.
		{script: []string{"SELECT @@project_id + 1"}, kind: TypeMismatch},
		{script: []string{"SELECT order_idd FROM `proj.sales.orders` WHERE @@project_id = 'proj'"}, kind: UnknownColumn},
	})
}

// CREATE TABLE … PARTITION BY _PARTITIONDATE is BigQuery's ingestion-time
// partitioning; GoogleSQL's analyzer knows no such column there.
func TestIngestionTimePartitioning(t *testing.T) {
	checkSkipRules(t, []skipRuleCase{
		{script: []string{"CREATE TABLE sales.t (x INT64) PARTITION BY _PARTITIONDATE"}, skipped: "ingestion time (_PARTITIONDATE)"},
		{script: []string{"CREATE TABLE sales.t (x INT64) PARTITION BY DATE(_PARTITIONTIME) OPTIONS (partition_expiration_days = 3)"}, skipped: "ingestion time (_PARTITIONTIME)"},
		{script: []string{"CREATE OR REPLACE TABLE sales.t (x INT64) PARTITION BY TIMESTAMP_TRUNC(_PARTITIONTIME, HOUR)"}, skipped: "ingestion time"},
		// Real errors stay errors: another unknown name in DDL, and the
		// pseudo-column where no table in scope has it.
		{script: []string{"CREATE TABLE sales.t (x INT64) PARTITION BY DATE(y)"}, kind: UnknownColumn},
		{script: []string{"SELECT _PARTITIONTIME FROM (SELECT 1 AS x)"}, kind: UnknownColumn},
		{script: []string{"SELECT _PARTITIONTIME AS pt FROM `proj.sales.orders`"}},
	})
}

// A script's CREATE TEMP TABLE makes a table the statements after it read
// by its one-part name; dfd does not keep its schema, so they are skipped.
func TestTemporaryTables(t *testing.T) {
	create := "CREATE TEMP TABLE big_orders AS SELECT * FROM `proj.sales.orders` WHERE amount > 100"
	checkSkipRules(t, []skipRuleCase{
		{script: []string{create}},
		{script: []string{create, "SELECT COUNT(*) FROM big_orders"}, skipped: "temporary table big_orders"},
		{script: []string{"CREATE TEMPORARY TABLE staged (id INT64)", "INSERT INTO staged SELECT order_id FROM `proj.sales.orders`"}, skipped: "temporary table staged"},
		// A temp table whose CREATE has a problem of its own still exists
		// for the statements after it, in BigQuery's view of the script.
		{script: []string{"CREATE TEMP TABLE t2 AS SELECT order_idd FROM `proj.sales.orders`", "SELECT * FROM t2"}, skipped: "temporary table t2"},
		// Real errors stay errors: a one-part name nothing created.
		{script: []string{create, "SELECT COUNT(*) FROM big_orderz"}, kind: UnknownTable},
	})
}

// EDIT_DISTANCE takes BYTES in BigQuery, STRING only in GoogleSQL v0.3.0;
// no other function's "No matching signature" is excused.
func TestNarrowerSignatures(t *testing.T) {
	checkSkipRules(t, []skipRuleCase{
		{script: []string{"SELECT EDIT_DISTANCE('kitten', 'sitting', max_distance => 2)"}},
		{script: []string{"SELECT EDIT_DISTANCE(b'abc', b'abd')"}, skipped: "EDIT_DISTANCE on BYTES"},
		{script: []string{"SELECT SAFE.EDIT_DISTANCE(b'abc', b'abd', max_distance => 1)"}, skipped: "EDIT_DISTANCE on BYTES"},
		// Real errors stay errors, EDIT_DISTANCE's without BYTES too.
		{script: []string{"SELECT EDIT_DISTANCE(1, 2)"}, kind: TypeMismatch},
		{script: []string{"SELECT EDIT_DISTANCE('a')"}, kind: TypeMismatch},
		{script: []string{"SELECT SUBSTR(order_id, 1) FROM `proj.sales.orders`"}, kind: TypeMismatch},
		{script: []string{"SELECT amount + status FROM `proj.sales.orders`"}, kind: TypeMismatch},
	})
}

// A CREATE TEMP FUNCTION the analyzer rejects (here for a type alias
// GoogleSQL lacks, or a body it does not take) still declares the function
// in BigQuery: calls to it are skipped, not "Function not found".
func TestTemporaryFunctionNotRegistered(t *testing.T) {
	checkSkipRules(t, []skipRuleCase{
		{script: []string{"CREATE TEMP FUNCTION f(x INT64) AS (x + @@no_such_variable)", "SELECT f(1)"}, skipped: "could not register"},
		{script: []string{"CREATE TEMP FUNCTION g(s STRING) AS (CONTAINS_SUBSTR(s, 'a'))", "SELECT g('abc')"}, skipped: "could not register"},
		{script: []string{"CREATE TEMPORARY FUNCTION h(x INT64) AS (x + y)", "SELECT h(1)"}, skipped: "could not register"},
		// Real errors stay errors: a function nothing declared.
		{script: []string{"CREATE TEMP FUNCTION h(x INT64) AS (x + y)", "SELECT hh(1)"}, kind: UnknownFunction},
		{script: []string{"CREATE TEMP FUNCTION k(x INT64) AS (x + 1)", "SELECT k('a')"}, kind: TypeMismatch},
	})
}

// An untrusted temporary function excuses only the errors that name it.
func TestUntrustedTemporaryFunctionExcusesOnlyItsCalls(t *testing.T) {
	checkSkipRules(t, []skipRuleCase{
		{script: []string{"CREATE TEMP FUNCTION a(x ANY TYPE) AS (x)", "SELECT a(1)"}, skipped: "could not register"},
		{script: []string{"CREATE TEMP FUNCTION a(x ANY TYPE) AS (x)", "SELECT order_idd FROM `proj.sales.orders`"}, kind: UnknownColumn},
		{script: []string{"CREATE TEMP FUNCTION a(x ANY TYPE) AS (x)", "SELECT amount + status FROM `proj.sales.orders`"}, kind: TypeMismatch},
	})
	for _, tc := range []struct {
		s, w string
		want bool
	}{{"function not found: a", "a", true}, {"unrecognized name: amount", "a", false}, {"a_b(a)", "a", true}, {"ab", "a", false}, {"", "a", false}} {
		if got := containsWord(tc.s, tc.w); got != tc.want {
			t.Errorf("containsWord(%q, %q) = %v", tc.s, tc.w, got)
		}
	}
}

// BigQuery's type aliases resolve: INT, SMALLINT, INTEGER, BIGINT,
// TINYINT, BYTEINT are INT64; DECIMAL NUMERIC; BIGDECIMAL BIGNUMERIC.
func TestTypeAliases(t *testing.T) {
	checkSkipRules(t, []skipRuleCase{
		{script: []string{"SELECT CAST(1 AS INTEGER), CAST(1 AS int), CAST(1 AS BIGINT), CAST(1 AS SMALLINT), CAST(1 AS TINYINT), CAST(1 AS BYTEINT), CAST(1 AS DECIMAL(10, 2)), CAST(1 AS BIGDECIMAL)"}},
		{script: []string{"CREATE TABLE sales.t (a INTEGER NOT NULL, d DECIMAL(12, 3), e ARRAY<INT>, s STRUCT<x SMALLINT>)"}},
		{script: []string{"CREATE TEMP FUNCTION inc(x INTEGER) RETURNS BIGINT AS (x + 1)", "SELECT inc(order_id) FROM `proj.sales.orders`"}},
		// Real errors stay errors.
		{script: []string{"CREATE TEMP FUNCTION inc(x INTEGER) RETURNS BIGINT AS (x + 1)", "SELECT inc(status) FROM `proj.sales.orders`"}, kind: TypeMismatch},
	})
}

// _FILE_NAME is the pseudo-column of external tables, which table schemas
// (warehouse metadata) do not carry.
func TestFileNamePseudoColumn(t *testing.T) {
	checkSkipRules(t, []skipRuleCase{
		{script: []string{"SELECT _FILE_NAME AS f, order_id FROM `proj.sales.orders`"}, skipped: "_FILE_NAME"},
		{script: []string{"SELECT order_id FROM `proj.sales.orders` WHERE _file_name LIKE '%.csv'"}, skipped: "_FILE_NAME"},
		// Real errors stay errors.
		{script: []string{"SELECT _FILE_NAMES FROM `proj.sales.orders`"}, kind: UnknownColumn},
	})
}
