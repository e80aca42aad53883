package main

import (
	"strings"
	"testing"
)

func TestParseSQLFormatter(t *testing.T) {
	js := `export const functions = [
    // https://cloud.google.com/bigquery/docs/reference/standard-sql/array_functions
    // 'ARRAY',
    'ARRAY_CONCAT',
    'NET.HOST',
    // https://cloud.google.com/bigquery/docs/reference/standard-sql/conditional_expressions
    // 'CASE',
    'COALESCE',
    // https://cloud.google.com/bigquery/docs/reference/legacy-sql
    // legacyDatetime
    'NOW',
    // ddl
    'OPTIONS',
];
//# sourceMappingURL=bigquery.functions.js.map`
	names, sections, legacy, err := parseSQLFormatter([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "ARRAY_CONCAT NET.HOST COALESCE" || sections != 2 || !legacy {
		t.Fatalf("names %q, %d sections, legacy %v", got, sections, legacy)
	}
	if _, _, _, err := parseSQLFormatter([]byte("// " + standardSQLPage + "x\n'not a name',\n")); err == nil {
		t.Fatal("an entry that is no function name was taken")
	}
}

func TestParseDocs(t *testing.T) {
	names, err := parseDocs([]byte("# comment\n\n# https://example/page\nGAP_FILL\nKLL_QUANTILES.INIT_INT64\n"))
	if err != nil || strings.Join(names, " ") != "GAP_FILL KLL_QUANTILES.INIT_INT64" {
		t.Fatalf("%q %v", names, err)
	}
	for _, bad := range []string{"GAP_FILL\n", "# https://example/page\ngap fill\n"} {
		if _, err := parseDocs([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestGenerateRefusesWhatSQLFormatterHas(t *testing.T) {
	if _, err := generate([]string{"ABS"}, []string{"ABS"}); err == nil {
		t.Fatal("a docs name sql-formatter already lists was accepted")
	}
	out, err := generate([]string{"SUM", "ABS", "ABS"}, []string{"GAP_FILL"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	if strings.Join(names, " ") != "ABS GAP_FILL SUM" {
		t.Fatalf("names %q", names)
	}
}
