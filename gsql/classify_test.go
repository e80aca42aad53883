package gsql

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// corpus is the statements a preview may meet, benign and hostile. Every
// entry says what GoogleSQL (BigQuery's parser) makes of it; the hostile
// ones are the reason this package exists: each of them looked like a
// read-only query to a hand-written lexer, or could.
var corpus = []struct {
	name string
	sql  string
	want Kind
}{
	// Plain reads.
	{"select", "SELECT 1", Query},
	{"trailing semicolon", "SELECT 1;", Query},
	{"leading and trailing comments", "-- a\n# b\n/* c */ SELECT 1 -- d", Query},
	{"parenthesised", "((SELECT 1))", Query},
	{"with", "WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b", Query},
	{"with recursive", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r", Query},
	{"set operation", "(SELECT 1) UNION ALL (SELECT 2) EXCEPT DISTINCT SELECT 3", Query},
	{"window and qualify", "SELECT x, ROW_NUMBER() OVER (PARTITION BY y ORDER BY z) AS rn FROM `p.d.t` QUALIFY rn = 1", Query},
	{"group by all", "SELECT a, SUM(b) FROM `p.d.t` GROUP BY ALL", Query},
	{"unnest and parameters", "SELECT * FROM `p.d.t` WHERE id IN UNNEST(@ids) AND day = @day", Query},
	{"struct and array", "SELECT STRUCT(1 AS a, [1, 2] AS b).b[OFFSET(0)]", Query},
	{"safe and namespaced built-ins", "SELECT SAFE.LOG(2), NET.HOST('https://x.y/'), SAFE.NET.HOST('x'), HLL_COUNT.MERGE(s) FROM `p.d.t`", Query},
	{"information schema", "SELECT table_name FROM `p.d.INFORMATION_SCHEMA.TABLES`", Query},
	{"wildcard table", "SELECT * FROM `p.d.events_*` WHERE _TABLE_SUFFIX BETWEEN '20240101' AND '20240131'", Query},
	{"partition pseudo-column", "SELECT _PARTITIONTIME AS pt FROM `p.d.t` WHERE _PARTITIONDATE = '2024-01-01'", Query},
	{"time travel", "SELECT * FROM `p.d.t` FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)", Query},
	{"built-in table function", "SELECT * FROM APPENDS(TABLE `p.d.t`, NULL, NULL)", Query},
	{"pivot", "SELECT * FROM (SELECT q, v FROM `p.d.t`) PIVOT (SUM(v) FOR q IN ('Q1', 'Q2'))", Query},
	{"tablesample", "SELECT * FROM `p.d.t` TABLESAMPLE SYSTEM (10 PERCENT)", Query},
	{"pipe syntax", "FROM `p.d.t` |> WHERE x > 1 |> AGGREGATE COUNT(*) AS n GROUP BY y |> ORDER BY n DESC |> LIMIT 10", Query},
	{"semicolons inside literals", "SELECT ';', \";\", '''; DROP TABLE t;''', \"\"\"a\n;DROP TABLE t\"\"\", r'\\d;', b';'", Query},
	{"keywords in a quoted identifier", "SELECT `DROP TABLE x; DELETE` FROM `p.d.t`", Query},
	{"comment ended by newline", "SELECT 1 -- ; DROP TABLE t\n", Query},
	{"comment ended by CRLF", "SELECT 1 -- x\r\n", Query},
	{"hash comment ended by newline", "SELECT 1 # ; DROP TABLE t\n", Query},
	{"block comment with semicolon", "SELECT /* ; DROP TABLE t; */ 1", Query},
	{"NUL inside a string", "SELECT 'a\x00b'", Query},
	{"unicode in a string", "SELECT 'ＤＲＯＰ ТАБЛЕ; 👍'", Query},

	// A comment ends at a lone carriage return too: what follows runs.
	{"-- comment ended by CR", "SELECT 1 --\r; DROP TABLE `d.t`\n", Script},
	{"# comment ended by CR", "SELECT 1 #\r; DROP TABLE `d.t`\n", Script},
	{"-- comment ended by CR, no semicolon before", "SELECT 1 --x\rUNION ALL SELECT 2", Query},

	// Scripts.
	{"two statements", "SELECT 1; DROP TABLE x", Script},
	{"two queries", "SELECT 1; SELECT 2", Script},
	{"temp function", "CREATE TEMP FUNCTION f(x INT64) AS (x + 1); SELECT f(1)", Script},
	{"begin end", "BEGIN SELECT 1; END", Statement},
	{"declare", "DECLARE x INT64 DEFAULT 1", Statement},
	{"set", "SET x = 1", Statement},

	// DML, DDL and friends.
	{"insert", "INSERT INTO `d.t` (a) VALUES (1)", Statement},
	{"insert select", "INSERT INTO `d.t` SELECT * FROM `d.u`", Statement},
	{"update", "UPDATE `d.t` SET a = 1 WHERE TRUE", Statement},
	{"delete", "DELETE FROM `d.t` WHERE TRUE", Statement},
	{"merge", "MERGE `d.t` T USING `d.u` S ON T.id = S.id WHEN MATCHED THEN DELETE", Statement},
	{"truncate", "TRUNCATE TABLE `d.t`", Statement},
	{"create table as", "CREATE OR REPLACE TABLE `d.t` AS SELECT 1 AS x", Statement},
	{"drop", "DROP TABLE `d.t`", Statement},
	{"export data", "EXPORT DATA OPTIONS (uri = 'gs://b/*.csv', format = 'CSV') AS SELECT 1", Statement},
	{"with then export", "WITH a AS (SELECT 1) EXPORT DATA OPTIONS (uri = 'gs://b/*') AS SELECT * FROM a", Invalid},
	{"load data", "LOAD DATA INTO `d.t` FROM FILES (format = 'CSV', uris = ['gs://b/x.csv'])", Statement},
	{"call", "CALL `d.proc`()", Statement},
	{"execute immediate", "EXECUTE IMMEDIATE 'DROP TABLE t'", Statement},
	{"grant", "GRANT `roles/bigquery.dataViewer` ON TABLE `d.t` TO 'user:a@b.c'", Statement},
	{"DML in a CTE", "WITH a AS (INSERT INTO t VALUES (1) THEN RETURN *) SELECT * FROM a", Invalid},
	{"DELETE in a subquery", "SELECT * FROM (DELETE FROM t WHERE TRUE)", Invalid},

	// Queries that call out.
	{"external query", "SELECT * FROM EXTERNAL_QUERY('p.us.conn', 'DELETE FROM users')", QueryWithEffects},
	{"external query, lower case", "select * from external_query('c', 'select 1')", QueryWithEffects},
	{"user function", "SELECT ds.my_fn(x) FROM `p.d.t`", QueryWithEffects},
	{"remote function, quoted path", "SELECT `p.ds.remote_fn`(x) FROM `p.d.t`", QueryWithEffects},
	{"safe user function", "SELECT SAFE.ds.fn(1)", QueryWithEffects},
	{"user table function", "SELECT * FROM ds.tvf(1)", QueryWithEffects},
	{"ML.PREDICT", "SELECT * FROM ML.PREDICT(MODEL `p.d.m`, (SELECT 1 AS x))", QueryWithEffects},
	{"AI.GENERATE", "SELECT AI.GENERATE('hi', connection_id => 'us.c')", QueryWithEffects},
	{"KEYS", "SELECT KEYS.KEYSET_CHAIN('gcp-kms://x', b'k')", QueryWithEffects},
	{"pipe call", "FROM `p.d.t` |> CALL ds.tvf()", QueryWithEffects},
	{"pipe export", "FROM `p.d.t` |> EXPORT DATA OPTIONS (uri = 'gs://b/*')", QueryWithEffects},
	{"pipe insert", "FROM `p.d.t` |> INSERT INTO `d.u`", QueryWithEffects},

	// What the lexer refuses.
	{"NUL outside a string", "SELECT 1\x00", Invalid},
	{"BOM", "\ufeffSELECT 1", Invalid},
	{"fullwidth keyword", "SELECT 1; ＤＲＯＰ TABLE t", Invalid},
	{"cyrillic look-alike", "SELECT 1; DRОP TABLE t", Invalid},
	{"unclosed comment", "SELECT 1 /* ; DROP TABLE t", Invalid},
	{"nested comment", "SELECT /* a /* b */ c */ 1", Invalid},
	{"unclosed string", "SELECT 'a; DROP TABLE t", Invalid},
	{"unbalanced parenthesis", "SELECT (1", Invalid},
	{"only comments", "  -- nothing\n /* here */", Empty},
	{"only semicolons", " ; ;", Invalid},
	{"blank", "", Empty},

	{"too large", "SELECT '" + strings.Repeat("x", MaxStatementBytes) + "'", TooLarge},
}

func TestClassify(t *testing.T) {
	ctx := context.Background()
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			v := Classify(ctx, c.sql)
			if v.Kind != c.want {
				t.Errorf("Classify(%q) = %v (%s), want %v", abbrev(c.sql), v.Kind, v.Reason, c.want)
			}
			if v.Reason == "" {
				t.Errorf("Classify(%q): no reason", abbrev(c.sql))
			}
			if v.ReadOnly() != (c.want == Query) {
				t.Errorf("ReadOnly() = %v", v.ReadOnly())
			}
			if again := Classify(ctx, c.sql); again != v {
				t.Errorf("second Classify = %+v, first %+v", again, v)
			}
		})
	}
}

func TestClassifyReasons(t *testing.T) {
	ctx := context.Background()
	for sql, want := range map[string]string{
		"SELECT 1":                          "read-only query",
		"DROP TABLE `d.t`":                  "DROP TABLE statement",
		"SELECT 1 --\r; DROP TABLE `d.t`\n": "script of 2 statements (query; DROP TABLE statement)",
		"INSERT INTO t VALUES (1)":          "INSERT statement",
		"EXPORT DATA OPTIONS (uri = 'gs://b/*') AS SELECT 1": "EXPORT DATA statement",
		"EXECUTE IMMEDIATE 'x'":                              "EXECUTE IMMEDIATE statement",
		"DECLARE x INT64":                                    "DECLARE statement",
		"SELECT * FROM EXTERNAL_QUERY('c', 'DELETE FROM u')": "query calls EXTERNAL_QUERY (a statement run by another database)",
		"SELECT ds.f(1)":                                     "query calls the routine ds.f",
		"SELECT * FROM ML.PREDICT(MODEL m, (SELECT 1))":      "query calls ML.PREDICT (a model BigQuery runs for you)",
	} {
		if got := Classify(ctx, sql).Reason; got != want {
			t.Errorf("Classify(%q).Reason = %q, want %q", sql, got, want)
		}
	}
	if r := Classify(ctx, "SELECT 1\x00").Reason; !strings.Contains(r, "GoogleSQL cannot parse it") || !strings.Contains(r, "Illegal input character") {
		t.Errorf("reason for a NUL: %q", r)
	}
}

func TestClassifyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := Classify(ctx, "SELECT 'not seen before, so not remembered'")
	if v.Kind != Unknown || v.ReadOnly() {
		t.Fatalf("cancelled Classify = %+v, want Unknown", v)
	}
	// Not remembered: a later call with a live context classifies it.
	if v := Classify(context.Background(), "SELECT 'not seen before, so not remembered'"); v.Kind != Query {
		t.Fatalf("after cancellation: %+v", v)
	}
}

// TestDeeplyNested: deep nesting is linear for GoogleSQL's parser (the
// hand-written lexer this package replaced was quadratic in it).
func TestDeeplyNested(t *testing.T) {
	ctx := context.Background()
	for _, s := range []string{
		strings.Repeat("(", 5000) + "SELECT 1" + strings.Repeat(")", 5000),
		nestedWith(2000),
		nestedSubqueries(2000),
	} {
		if v := Classify(ctx, s); v.Kind != Query && v.Kind != Invalid {
			t.Errorf("%d bytes of nesting: %+v", len(s), v)
		}
	}
}

// TestDeniedKindsReviewed pins the go-googlesql version the lists of
// refused node kinds and built-in namespaces were reviewed against. A new
// GoogleSQL can add syntax (a pipe operator that writes, a function
// namespace that calls out); when this fails after an upgrade, read the
// new ASTNodeKind constants and function namespaces, update refusedKinds
// and builtinNamespaces, extend the corpus, then the version here.
func TestDeniedKindsReviewed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`github\.com/goccy/go-googlesql (\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod does not require github.com/goccy/go-googlesql")
	}
	if got, reviewed := string(m[1]), "v0.3.0"; got != reviewed {
		t.Fatalf("go-googlesql is %s; refusedKinds and builtinNamespaces were reviewed for %s (see this test's comment)", got, reviewed)
	}
}

func TestDescribeDebug(t *testing.T) {
	for in, want := range map[string]string{
		"DropStatement TABLE [14-30]":             "DROP TABLE statement",
		"CreateFunctionStatement(is_temp) [0-31]": "CREATE FUNCTION statement",
		"CreateTableStatement [0-10]":             "CREATE TABLE statement",
		"VariableDeclaration [0-15]":              "DECLARE statement",
		"AuxLoadDataStatement [0-9]":              "LOAD DATA statement",
		"ExportDataStatement [0-51]\n  Options":   "EXPORT DATA statement",
		"BeginEndBlock [0-19]":                    "BEGIN … END block",
		"SomethingNew [0-1]":                      "SOMETHING NEW",
		"DropStatement(is_if_exists) VIEW [0-30]": "DROP VIEW statement",
	} {
		if got := describeDebug(in); got != want {
			t.Errorf("describeDebug(%q) = %q, want %q", in, got, want)
		}
	}
}

func abbrev(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func nestedWith(depth int) string {
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT 1 AS x)")
	for i := 1; i < depth; i++ {
		b.WriteString(", c")
		b.WriteString(itoa(i))
		b.WriteString(" AS (SELECT x + 1 AS x FROM c")
		b.WriteString(itoa(i - 1))
		b.WriteString(" WHERE x > 0)")
	}
	b.WriteString(" SELECT * FROM c")
	b.WriteString(itoa(depth - 1))
	return b.String()
}

func nestedSubqueries(depth int) string {
	return strings.Repeat("SELECT x FROM (", depth) + "SELECT 1 AS x" + strings.Repeat(")", depth)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
