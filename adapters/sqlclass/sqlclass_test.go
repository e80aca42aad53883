package sqlclass

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		stmt string
		want Kind
	}{
		// Plain queries.
		{"select", "SELECT 1", Query},
		{"lower case", "select * from `p.d.t` where x > 1", Query},
		{"mixed case", "SeLeCt a FrOm t", Query},
		{"leading whitespace", "\n\t  SELECT 1\n", Query},
		{"trailing semicolon", "SELECT 1;", Query},
		{"trailing semicolons and comment", "SELECT 1; ; -- done", Query},
		{"parenthesised", "(SELECT 1)", Query},
		{"nested parentheses", "((SELECT 1) UNION ALL (SELECT 2)) ORDER BY 1", Query},
		{"set operation", "SELECT 1 UNION ALL SELECT 2 EXCEPT DISTINCT SELECT 3", Query},
		{"subquery", "SELECT * FROM (SELECT x FROM t) WHERE x IN (SELECT y FROM u)", Query},
		{"with", "WITH a AS (SELECT 1 AS x) SELECT x FROM a", Query},
		{"with several CTEs", "WITH a AS (SELECT 1), `b` AS (SELECT * FROM a) SELECT * FROM b", Query},
		{"with recursive", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r", Query},
		{"parenthesised with", "(WITH a AS (SELECT 1) SELECT * FROM a)", Query},
		{"with body in parentheses", "WITH a AS (SELECT 1) (SELECT * FROM a)", Query},
		{"nested with in CTE", "WITH a AS (WITH b AS (SELECT 1) SELECT * FROM b) SELECT * FROM a", Query},
		{"pipe syntax from", "FROM t |> WHERE x > 1 |> AGGREGATE COUNT(*) GROUP BY y", Query},
		{"pipe after select", "SELECT * FROM t |> ORDER BY x |> LIMIT 10", Query},
		{"legacy sql prefix comment", "#legacySQL\nSELECT * FROM [p:d.t]", Query},
		{"unicode identifier", "SELECT été FROM t", Query},

		// Comments and literals that hide keywords or separators.
		{"line comment with drop", "SELECT 1 -- ; DROP TABLE x", Query},
		{"hash comment with drop", "SELECT 1 # ; DROP TABLE x\n", Query},
		{"block comment with drop", "SELECT /* ; DROP TABLE x; */ 1", Query},
		{"comment before statement", "/* INSERT */ -- DELETE\n# UPDATE\nSELECT 1", Query},
		{"string with semicolon", "SELECT '; DROP TABLE x; --' AS s", Query},
		{"double-quoted string", `SELECT "DELETE FROM t; x" AS s`, Query},
		{"escaped quote", `SELECT 'it\'s; DROP TABLE x' AS s`, Query},
		{"raw string", `SELECT r'\d+;\'' AS re`, Query},
		{"bytes string", `SELECT b'abc;', rb"x\";"`, Query},
		{"triple-quoted string", "SELECT '''multi\nline; DROP TABLE x ' '' ''' AS s", Query},
		{"triple double quotes", `SELECT """a "quoted"; DELETE""" AS s`, Query},
		{"comment markers in string", "SELECT '-- not a comment', '/* nor this', '# nor this' FROM t", Query},
		{"string in comment", "SELECT 1 /* it's */", Query},
		{"backticked identifier", "SELECT `delete`, `x;y` FROM `p.d.drop table`", Query},
		{"keyword-named columns", "SELECT update, delete, insert FROM t", Query},

		// Statements that are not read-only queries.
		{"insert", "INSERT INTO t (a) VALUES (1)", Other},
		{"insert select", "insert into t select * from u", Other},
		{"update", "UPDATE t SET a = 1 WHERE true", Other},
		{"delete", "DELETE FROM t WHERE true", Other},
		{"merge", "MERGE t USING u ON t.id = u.id WHEN MATCHED THEN DELETE", Other},
		{"create", "CREATE OR REPLACE TABLE t AS SELECT 1", Other},
		{"create temp function", "CREATE TEMP FUNCTION f() AS (1)", Other},
		{"drop", "DROP TABLE IF EXISTS t", Other},
		{"alter", "ALTER TABLE t SET OPTIONS (description = 'x')", Other},
		{"truncate", "TRUNCATE TABLE t", Other},
		{"grant", "GRANT `roles/bigquery.dataViewer` ON TABLE t TO 'user:a@b.c'", Other},
		{"declare", "DECLARE x INT64 DEFAULT 1", Other},
		{"set", "SET x = (SELECT 1)", Other},
		{"call", "CALL p.d.proc()", Other},
		{"export data", "EXPORT DATA OPTIONS (uri = 'gs://b/*.csv', format = 'CSV') AS SELECT 1", Other},
		{"load data", "LOAD DATA INTO t FROM FILES (format = 'CSV', uris = ['gs://b/x'])", Other},
		{"execute immediate", "EXECUTE IMMEDIATE 'SELECT 1'", Other},
		{"begin end", "BEGIN SELECT 1; END", Script},
		{"assert", "ASSERT (SELECT COUNT(*) FROM t) > 0", Other},
		{"with delete nonsense", "WITH x AS (DELETE FROM t WHERE true) SELECT 1", Other},
		{"with insert body", "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", Other},
		{"with missing AS", "WITH x (SELECT 1) SELECT 1", Other},
		{"parenthesised delete", "(DELETE FROM t WHERE true)", Other},
		{"pipe with unknown operator", "FROM t |> EXPORT DATA OPTIONS (uri = 'gs://x')", Other},
		{"pipe at end", "FROM t |>", Other},
		{"values", "VALUES (1)", Other},
		{"only a string", "'SELECT 1'", Other},

		// Several statements.
		{"select then drop", "SELECT 1; DROP TABLE x", Script},
		{"select then drop lower", "select * from t ; drop table x ;", Script},
		{"two selects", "SELECT 1; SELECT 2", Script},
		{"declare then select", "DECLARE x INT64; SELECT x", Script},
		{"semicolon inside parentheses", "SELECT (1; DROP TABLE x)", Script},

		// Nothing, or not lexable.
		{"empty", "", Empty},
		{"blank", "  \n\t ", Empty},
		{"only comments", "-- hello\n/* world */ # !", Empty},
		{"only semicolons", ";;", Empty},
		{"unterminated string", "SELECT 'abc", Malformed},
		{"unterminated triple string", "SELECT '''abc''", Malformed},
		{"unterminated comment", "SELECT 1 /* DROP", Malformed},
		{"unterminated identifier", "SELECT * FROM `p.d.t", Malformed},
		{"unbalanced open", "SELECT (1", Malformed},
		{"unbalanced close", "SELECT 1) ; DROP TABLE x; (", Malformed},
		{"escape at end", `SELECT 'abc\`, Malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Classify(tt.stmt)
			if got != tt.want {
				t.Errorf("Classify(%q) = %v (%s), want %v", tt.stmt, got, why, tt.want)
			}
			if why == "" {
				t.Errorf("Classify(%q): empty reason", tt.stmt)
			}
			if IsReadOnlyQuery(tt.stmt) != (tt.want == Query) {
				t.Errorf("IsReadOnlyQuery(%q) = %v", tt.stmt, !(tt.want == Query))
			}
		})
	}
}

func TestClassifyReasons(t *testing.T) {
	tests := []struct{ stmt, want string }{
		{"SELECT 1", "read-only query"},
		{"insert into t values (1)", "INSERT statement"},
		{"((DELETE FROM t))", "DELETE statement"},
		{"SELECT 1; DROP TABLE x; SELECT 2", "script of 3 statements"},
		{"WITH x AS (DELETE FROM t) SELECT 1", "WITH whose body is not a query"},
		{"SELECT 'x", "unterminated string literal"},
		{"FROM t |> INSERT INTO u", "query with pipe operator |> INSERT"},
		{"+1", "unrecognised statement"},
	}
	for _, tt := range tests {
		if _, got := Classify(tt.stmt); got != tt.want {
			t.Errorf("Classify(%q) reason = %q, want %q", tt.stmt, got, tt.want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"SELECT 1", "WITH a AS (SELECT 1) SELECT 1", "SELECT '; x", "/* */ --", "`a\\`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, why := Classify(s) // must not panic or loop
		if why == "" {
			t.Errorf("Classify(%q) = %v with empty reason", s, k)
		}
	})
}

func BenchmarkClassify(b *testing.B) {
	stmt := `-- daily volume
WITH recent AS (
  SELECT DATE(clicked_at) AS d, COUNT(*) AS n
  FROM ` + "`acme-collector.landing.raw_clicks`" + `
  WHERE country IN ('US', 'CA', 'MX') /* markets */
  GROUP BY 1
)
SELECT AVG(n) AS avg_clicks FROM recent`
	for b.Loop() {
		Classify(stmt)
	}
}
