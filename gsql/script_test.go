package gsql

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// A script's statements are analysed in order, its DECLAREd variables
// typed and resolved by bare name in the statements after them (a column
// of the same name first, as in BigQuery), until EndScript.
func TestAnalyzeScripts(t *testing.T) {
	ctx := context.Background()
	type step struct {
		sql string
		// want: "" analysed (cols: its output, "name TYPE, …"),
		// "skip:…" skipped with that text, "problem:kind:line:col:…" a
		// problem, "end" EndScript.
		want, cols string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{{
		name: "typed, then used",
		steps: []step{
			{sql: "DECLARE x INT64 DEFAULT 1"},
			{sql: "SELECT x + 1 AS y, X AS upper", cols: "y INT64, upper INT64"},
			{sql: "", want: "end"},
			{sql: "SELECT x AS y", want: "problem:unknown-column:1:8:Unrecognized name: x"},
		},
	}, {
		name: "typed by the default, which reads a table",
		steps: []step{
			{sql: "DECLARE since DEFAULT (SELECT MAX(ordered_at) FROM `proj.sales.orders`)"},
			{sql: "SELECT order_id, since AS s FROM `proj.sales.orders` WHERE ordered_at > since", cols: "order_id INT64, s TIMESTAMP"},
			{sql: "SELECT order_id FROM `proj.sales.orders` WHERE amount > since", want: "problem:type-mismatch:1:48:No matching signature for operator >"},
		},
	}, {
		name: "a column wins over a variable",
		steps: []step{
			{sql: "DECLARE status INT64 DEFAULT 1"},
			{sql: "SELECT status FROM `proj.sales.orders`", cols: "status STRING"},
			{sql: "SELECT status AS s", cols: "s INT64"},
		},
	}, {
		name: "several names, a struct type, no default",
		steps: []step{
			{sql: "DECLARE a, b STRUCT<n INT64, label STRING>"},
			{sql: "SELECT a.label AS l, b.n AS n", cols: "l STRING, n INT64"},
		},
	}, {
		name: "problems in the declaration",
		steps: []step{
			{sql: "DECLARE z DEFAULT (SELECT nope FROM `proj.sales.orders`)", want: "problem:unknown-column:1:27:Unrecognized name: nope"},
			{sql: "DECLARE w DEFAULT (\n  SELECT MAX(amount)\n  FROM `proj.sales.orders`\n  WHERE statu = 'paid')", want: "problem:unknown-column:4:9:Unrecognized name: statu"},
			{sql: "DECLARE q NO_SUCH_TYPE", want: "skip:could not read its type"},
			{sql: "DECLARE r DEFAULT (SELECT 1 FROM `proj.sales.unknown`)", want: "skip:reads proj.sales.unknown"},
			{sql: "DECLARE u DEFAULT NULL", want: "skip:neither given nor told"},
			{sql: "DECLARE v INT64"},
			{sql: "DECLARE V STRING", want: "skip:declares V a second time"},
		},
	}, {
		name: "a script in one string",
		steps: []step{
			{sql: "CREATE TEMP FUNCTION f(x INT64) AS (x + 1);\nDECLARE n DEFAULT f(1);\nSELECT n AS m"},
			{sql: "SELECT n * 2 AS k", cols: "k INT64"},
			{sql: "SELECT 1 AS one;\n  SELECT nope", want: "problem:unknown-column:2:10:Unrecognized name: nope"},
			// A table to fetch: nothing declared yet, so the caller's
			// second try (after adding it) declares once.
			{sql: "DECLARE t0 INT64 DEFAULT 1;\nSELECT t0, x FROM `proj.sales.later`", want: "skip:reads proj.sales.later"},
			{sql: "", want: "add:proj.sales.later"},
			{sql: "DECLARE t0 INT64 DEFAULT 1;\nSELECT t0, x FROM `proj.sales.later`"},
			{sql: "DECLARE c INT64;\nSET c = (SELECT COUNT(*) FROM `proj.sales.orders`);\nSELECT c AS cc", want: ""},
			{sql: "SET c = (SELECT COUNT(*) FROM `proj.sales.orders` WHERE statu = 'x')", want: "problem:unknown-column:1:57:Unrecognized name: statu"},
			{sql: "SET undeclared = 1", want: "skip:which its script did not declare"},
			{sql: "SET (c, n) = (1, 2)", want: "skip:scripting statement (SET)"},
		},
	}, {
		name: "IF: its conditions and branches",
		steps: []step{
			{sql: "DECLARE c INT64 DEFAULT 0"},
			{sql: "IF c > 0 THEN SELECT 1; END IF"},
			{sql: "IF (SELECT COUNT(*) FROM `proj.sales.orders`) > c THEN\n  SELECT nope;\nELSE\n  SET c = 1;\nEND IF", want: "problem:unknown-column:2:10:Unrecognized name: nope"},
			{sql: "IF statu = 1 THEN SELECT 1; END IF", want: "problem:unknown-column:1:4:Unrecognized name: statu"},
			{sql: "IF c = 1 THEN SELECT 1;\nELSEIF c = 2 THEN SET (c, c) = (1, 2);\nEND IF", want: "skip:ELSEIF 1's statement 1 of 1: it is a scripting statement (SET)"},
			{sql: "IF c = 1 THEN SELECT 1; ELSE SELECT amount FROM `proj.sales.unknown`; END IF", want: "skip:reads proj.sales.unknown"},
		},
	}, {
		name: "loops and CASE",
		steps: []step{
			{sql: "DECLARE c INT64 DEFAULT 0"},
			{sql: "WHILE c < 3 DO SET c = c + 1; END WHILE"},
			{sql: "LOOP\n  SET c = c + 1;\n  IF c > 3 THEN LEAVE; END IF;\nEND LOOP"},
			{sql: "REPEAT\n  SET c = c + 1;\nUNTIL c >= nope END REPEAT", want: "problem:unknown-column:3:12:Unrecognized name: nope"},
			{sql: "FOR r IN (SELECT order_id, amount FROM `proj.sales.orders`) DO\n  SELECT r.order_id + 1 AS n, r.amount;\n  CONTINUE;\nEND FOR"},
			{sql: "SELECT r.order_id", want: "problem:unknown-column:1:8:Unrecognized name: r"},
			{sql: "FOR r IN (SELECT order_id FROM `proj.sales.orders`) DO\n  SELECT r.nope;\nEND FOR", want: "problem:unknown-column:2:12:"},
			{sql: "FOR c IN (SELECT 1 AS one) DO SELECT 1; END FOR", want: "skip:FOR's query: it declares c a second time"},
			{sql: "CASE c WHEN 1 THEN SELECT 1; WHEN 2 THEN SELECT nope; ELSE SELECT 3; END CASE", want: "problem:unknown-column:1:49:Unrecognized name: nope"},
			{sql: "CASE WHEN c > 0 THEN SELECT 1; END CASE"},
		},
	}, {
		name: "BEGIN … END blocks and transactions",
		steps: []step{
			{sql: "DECLARE c INT64 DEFAULT 0"},
			{sql: "BEGIN\n  DECLARE inner_n INT64 DEFAULT 1;\n  SELECT inner_n + c AS s;\nEXCEPTION WHEN ERROR THEN\n  SELECT @@error.message AS m, inner_n;\nEND"},
			// The block's variable ended with it; the script's did not.
			{sql: "SELECT inner_n AS x", want: "problem:unknown-column:1:8:Unrecognized name: inner_n"},
			{sql: "SELECT c AS x", cols: "x INT64"},
			{sql: "BEGIN\n  DECLARE c STRING;\nEND", want: "skip:BEGIN's statement 1 of 1: it declares c a second time"},
			{sql: "BEGIN\n  DECLARE leaks INT64;\n  SELECT nope;\nEND", want: "problem:unknown-column:3:10:Unrecognized name: nope"},
			{sql: "SELECT leaks", want: "problem:unknown-column:1:8:Unrecognized name: leaks"},
			{sql: "BEGIN\n  IF c > 0 THEN\n    SELECT nope;\n  END IF;\nEND", want: "problem:unknown-column:3:12:Unrecognized name: nope"},
			{sql: "BEGIN TRANSACTION;\nDELETE FROM `proj.sales.orders` WHERE amount < c;\nCOMMIT TRANSACTION"},
			{sql: "RAISE USING MESSAGE = CONCAT('bad: ', CAST(c AS STRING))"},
			{sql: "RAISE USING MESSAGE = CONCAT('bad: ', nope)", want: "problem:unknown-column:1:39:Unrecognized name: nope"},
			{sql: "BEGIN\n  SELECT 1;\nEXCEPTION WHEN ERROR THEN\n  RAISE;\nEND"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := testCatalog(t)
			before := c.StateKey()
			for i, s := range tc.steps {
				if path, ok := strings.CutPrefix(s.want, "add:"); ok {
					if err := c.Add(Table{Path: path, Columns: []Column{{Name: "x", Type: typ("STRING")}}}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if s.want == "end" {
					c.EndScript()
					if c.StateKey() != before {
						t.Errorf("StateKey after EndScript %q, before the script %q", c.StateKey(), before)
					}
					continue
				}
				an, err := c.Analyze(ctx, s.sql)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && s.want == "" && c.StateKey() == before {
					t.Errorf("%q left StateKey as it was", s.sql)
				}
				var cols []string
				for _, col := range an.Columns {
					cols = append(cols, col.Name+" "+col.Type.String())
				}
				switch kind, rest, _ := strings.Cut(s.want, ":"); kind {
				case "":
					if an.Problem != nil || an.Skipped != "" || strings.Join(cols, ", ") != s.cols {
						t.Errorf("%q: problem %+v skipped %q columns %q, want analysed with %q", s.sql, an.Problem, an.Skipped, cols, s.cols)
					}
				case "skip":
					if an.Problem != nil || !strings.Contains(an.Skipped, rest) {
						t.Errorf("%q: problem %+v skipped %q, want skipped with %q", s.sql, an.Problem, an.Skipped, rest)
					}
				case "problem":
					p := an.Problem
					got := ""
					if p != nil {
						got = string(p.Kind) + ":" + itoa(p.Line) + ":" + itoa(p.Column) + ":" + p.Message
					}
					if !strings.HasPrefix(got, rest) {
						t.Errorf("%q: problem %q (skipped %q), want %q", s.sql, got, an.Skipped, rest)
					}
				}
			}
		})
	}
}

// A script's variables go with it: scripts declared and ended one after
// another leave nothing behind (a finalizer cycle among go-googlesql's
// handles would keep every script catalog, as keepalive.go found for
// temporary functions).
func TestScriptsLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("three thousand scripts")
	}
	c := testCatalog(t)
	ctx := context.Background()
	script := func() {
		for _, sql := range []string{"DECLARE since DEFAULT (SELECT MAX(ordered_at) FROM `proj.sales.orders`)", "DECLARE s STRUCT<a INT64, b STRING>",
			"SELECT order_id, s.b FROM `proj.sales.orders` WHERE ordered_at > since"} {
			if an, err := c.Analyze(ctx, sql); err != nil || an.Problem != nil || an.Skipped != "" {
				t.Fatalf("%q: %+v %v", sql, an, err)
			}
		}
		c.EndScript()
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // a handle's finalizer frees what the next collection takes
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for range 200 {
		script()
	}
	first := heap()
	const n = 3000
	for range n {
		script()
	}
	last := heap()
	t.Logf("live heap after 200 scripts %d KiB, after %d more %d KiB", first>>10, n, last>>10)
	if last > first+1<<20 { // a script kept costs ≈1 KiB (measured with EndScript keeping them)
		t.Errorf("live heap grew from %d KiB to %d KiB over %d scripts", first>>10, last>>10, n)
	}
}

// Redeclare makes in another catalog the variables a DECLARE's analysis
// said it declared, as the DECLARE made them: the same state, and the
// statements after it typed alike. A name declared already is refused.
func TestRedeclare(t *testing.T) {
	ctx := context.Background()
	stmts := []string{"DECLARE since DEFAULT (SELECT MAX(ordered_at) FROM `proj.sales.orders`)", "DECLARE a, b STRUCT<n INT64, label STRING>"}
	use := "SELECT since AS s, a.label AS l, b.n AS n"
	first := testCatalog(t)
	var declared [][]Variable
	for _, sql := range stmts {
		an, err := first.Analyze(ctx, sql)
		if err != nil || an.Problem != nil || an.Skipped != "" {
			t.Fatalf("%q: %+v %v", sql, an, err)
		}
		declared = append(declared, an.Declared)
	}
	if got := len(declared[0]) + len(declared[1]); got != 3 {
		t.Fatalf("the DECLAREs said they declared %v", declared)
	}
	want, err := first.Analyze(ctx, use)
	if err != nil || want.Problem != nil {
		t.Fatalf("%q: %+v %v", use, want, err)
	}
	second := testCatalog(t)
	for _, vars := range declared {
		if ok, err := second.Redeclare(vars); !ok || err != nil {
			t.Fatalf("Redeclare(%v) = %v, %v", vars, ok, err)
		}
	}
	if second.StateKey() != first.StateKey() {
		t.Errorf("state %q after Redeclare, %q after the DECLAREs", second.StateKey(), first.StateKey())
	}
	got, err := second.Analyze(ctx, use)
	if err != nil || got.Problem != nil || columnsText(got.Columns) != columnsText(want.Columns) {
		t.Errorf("after Redeclare %q: %+v %v; after the DECLAREs: %s", use, got, err, columnsText(want.Columns))
	}
	if ok, err := second.Redeclare(declared[0]); ok || err != nil {
		t.Errorf("declaring since twice: %v, %v; want false", ok, err)
	}
}

func columnsText(cols []Column) string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name+" "+c.Type.String())
	}
	return strings.Join(out, ", ")
}
