package gsql

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// The false-alarm corpus: valid BigQuery SQL covering BigQuery's documented
// query syntax, functions of every family, DML, DDL and scripting
// (testdata/sql/bigquery_valid.json, each entry citing the reference page
// it follows). dfd's promise is that an error is reported only when the
// analyzer is certain: on valid SQL no problem may be Certain().
const falseAlarmCorpus = "../testdata/sql/bigquery_valid.json"

type faCorpus struct {
	About          []string           `json:"about"`
	DefaultProject string             `json:"defaultProject"`
	Tables         map[string]faTable `json:"tables"`
	Entries        []faEntry          `json:"entries"`
}

type faTable struct {
	Columns []string `json:"columns"` // "name TYPE", in BigQuery's type syntax
	Pseudo  []string `json:"pseudo"`
}

type faEntry struct {
	ID     string   `json:"id"`
	Source string   `json:"source"`
	Tables []string `json:"tables"`
	SQL    string   `json:"sql"`
	Script []string `json:"script"` // statements analysed in order on one catalog
}

func (e faEntry) statements() []string {
	if e.SQL != "" {
		return []string{e.SQL}
	}
	return e.Script
}

// TestFalseAlarmsOnValidBigQuery analyses every corpus statement against a
// catalog of its entry's tables and fails on any certain problem (which
// would be an error in the editor and fail `dfd check`). It logs how many
// statements were analysed clean, skipped (by reason), or drew a warning or
// a hint: run with -v to see the measurement.
func TestFalseAlarmsOnValidBigQuery(t *testing.T) {
	data, err := os.ReadFile(falseAlarmCorpus)
	if err != nil {
		t.Fatal(err)
	}
	var corpus faCorpus
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&corpus); err != nil {
		t.Fatalf("%s: %v", falseAlarmCorpus, err)
	}
	tables := map[string]Table{}
	for path, ct := range corpus.Tables {
		tb := Table{Path: path}
		for _, c := range ct.Columns {
			col, err := parseColumn(c)
			if err != nil {
				t.Fatalf("table %s: %v", path, err)
			}
			tb.Columns = append(tb.Columns, col)
		}
		for _, c := range ct.Pseudo {
			col, err := parseColumn(c)
			if err != nil {
				t.Fatalf("table %s: %v", path, err)
			}
			tb.Pseudo = append(tb.Pseudo, col)
		}
		tables[path] = tb
	}

	ctx := context.Background()
	var (
		statements, clean int
		skipped           = map[string][]string{} // reason class → entry ids
		warnings, hints   = map[string][]string{}, map[string][]string{}
		seen              = map[string]bool{}
	)
	for _, e := range corpus.Entries {
		if e.ID == "" || seen[e.ID] || e.Source == "" || (e.SQL == "") == (len(e.Script) == 0) {
			t.Fatalf("entry %q: needs a unique id, a source and one of sql or script", e.ID)
		}
		seen[e.ID] = true
		c, err := NewCatalog(corpus.DefaultProject)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range e.Tables {
			tb, ok := tables[path]
			if !ok {
				t.Fatalf("entry %s: table %s has no schema in the corpus", e.ID, path)
			}
			if err := c.Add(tb); err != nil {
				t.Fatalf("entry %s: %v", e.ID, err)
			}
		}
		blind := false
		for i, sql := range e.statements() {
			statements++
			label := e.ID
			if len(e.Script) > 0 {
				label = fmt.Sprintf("%s[%d]", e.ID, i)
			}
			if blind {
				// As in sqlcheck: a statement after one dfd did not
				// analyse may use what that one declared.
				skipped["after a skipped statement of its script"] = append(skipped["after a skipped statement of its script"], label)
				continue
			}
			a, err := c.Analyze(ctx, sql)
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			switch {
			case a.Skipped != "":
				blind = true
				class := skipClass(a.Skipped)
				skipped[class] = append(skipped[class], label)
			case a.Problem == nil:
				clean++
			case a.Problem.Kind.Certain():
				t.Errorf("false alarm on valid BigQuery SQL, entry %s (%s):\n%s\n  => %s at %d:%d: %s",
					label, e.Source, sql, a.Problem.Kind, a.Problem.Line, a.Problem.Column, a.Problem.Message)
			case a.Problem.Kind == OtherError:
				warnings[a.Problem.Message] = append(warnings[a.Problem.Message], label)
			default:
				hints[a.Problem.Message] = append(hints[a.Problem.Message], label)
			}
		}
	}
	count := func(m map[string][]string) int {
		n := 0
		for _, ids := range m {
			n += len(ids)
		}
		return n
	}
	t.Logf("%d entries, %d statements: %d analysed clean, %d skipped, %d warnings, %d hints, %d certain (false alarms)",
		len(corpus.Entries), statements, clean, count(skipped), count(warnings), count(hints),
		statements-clean-count(skipped)-count(warnings)-count(hints))
	for _, group := range []struct {
		name string
		m    map[string][]string
	}{{"skipped", skipped}, {"warning", warnings}, {"hint", hints}} {
		keys := make([]string, 0, len(group.m))
		for k := range group.m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if len(group.m[keys[i]]) != len(group.m[keys[j]]) {
				return len(group.m[keys[i]]) > len(group.m[keys[j]])
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			t.Logf("  %s %3d  %s: %s", group.name, len(group.m[k]), k, strings.Join(group.m[k], " "))
		}
	}
}

// skipClass groups Analysis.Skipped reasons for the report.
func skipClass(why string) string {
	switch {
	case strings.HasPrefix(why, "GoogleSQL does not know "):
		return strings.TrimSuffix(why, "; not analysed")
	case strings.HasSuffix(why, "; not analysed"):
		return "GoogleSQL's parser doubts it: " + strings.TrimSuffix(why, "; not analysed")
	case strings.HasPrefix(why, "GoogleSQL's analyzer does not take it"):
		msg := strings.TrimPrefix(why, "GoogleSQL's analyzer does not take it (")
		if i := strings.IndexAny(msg, ":("); i > 0 {
			msg = msg[:i]
		}
		return "analyzer does not take it: " + strings.TrimSpace(msg)
	case strings.HasPrefix(why, "it is a scripting statement"):
		return "a scripting statement (DECLARE, SET, IF, LOOP, BEGIN, CALL, …)"
	case strings.HasPrefix(why, "a script of"):
		return "a script of several statements"
	case strings.Contains(why, "a BigQuery function GoogleSQL's analyzer lacks"):
		return "calls a BigQuery function GoogleSQL lacks"
	case strings.Contains(why, "a routine dfd does not know"):
		return "calls a routine or namespace (ML., AI., dataset.fn)"
	case strings.Contains(why, "_FILE_NAME"):
		return "uses _FILE_NAME, the external tables' pseudo-column"
	case strings.Contains(why, "which dfd does not model"):
		return "uses a table function, model or connection dfd does not model"
	case strings.Contains(why, "whose schema dfd does not know"):
		return "reads a table without a schema"
	case strings.Contains(why, "INFORMATION_SCHEMA"):
		return "reads INFORMATION_SCHEMA"
	case strings.Contains(why, "temporary function"):
		return "calls a temporary function dfd could not register"
	case strings.Contains(why, "temporary table"):
		return "reads a temporary table its script created"
	case strings.Contains(why, "ingestion time"):
		return "CREATE TABLE partitioned by ingestion time"
	case strings.Contains(why, "system variable"), strings.Contains(why, "it sets @@"):
		return "a system variable dfd does not know, or SET of the default dataset"
	case strings.Contains(why, "a BigQuery signature GoogleSQL's analyzer lacks"):
		return "calls a function whose BigQuery signatures GoogleSQL lacks some of"
	}
	return why
}

// parseColumn reads "name TYPE".
func parseColumn(s string) (Column, error) {
	name, typ, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return Column{}, fmt.Errorf("column %q is not \"name TYPE\"", s)
	}
	t, rest, err := parseType(strings.TrimSpace(typ))
	if err != nil {
		return Column{}, fmt.Errorf("column %q: %w", s, err)
	}
	if strings.TrimSpace(rest) != "" {
		return Column{}, fmt.Errorf("column %q: %q after its type", s, rest)
	}
	return Column{Name: name, Type: t}, nil
}

// parseType reads one BigQuery type (INT64, ARRAY<T>, STRUCT<a T, …>) from
// the start of s and returns the rest.
func parseType(s string) (Type, string, error) {
	s = strings.TrimSpace(s)
	end := strings.IndexAny(s, "<>, ")
	if end < 0 {
		end = len(s)
	}
	kind := strings.ToUpper(s[:end])
	rest := strings.TrimSpace(s[end:])
	if kind == "" {
		return Type{}, s, fmt.Errorf("no type at %q", s)
	}
	if kind != "ARRAY" && kind != "STRUCT" {
		return Type{Kind: kind}, rest, nil
	}
	if !strings.HasPrefix(rest, "<") {
		return Type{}, rest, fmt.Errorf("%s without <…>", kind)
	}
	rest = rest[1:]
	out := Type{Kind: kind}
	for {
		if kind == "ARRAY" {
			elem, r, err := parseType(rest)
			if err != nil {
				return Type{}, r, err
			}
			out.Elem, rest = &elem, r
		} else {
			rest = strings.TrimSpace(rest)
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				return Type{}, rest, fmt.Errorf("STRUCT field without a type at %q", rest)
			}
			name := rest[:sp]
			ft, r, err := parseType(rest[sp+1:])
			if err != nil {
				return Type{}, r, err
			}
			out.Fields = append(out.Fields, Column{Name: name, Type: ft})
			rest = r
		}
		rest = strings.TrimSpace(rest)
		switch {
		case strings.HasPrefix(rest, ">"):
			return out, rest[1:], nil
		case strings.HasPrefix(rest, ",") && kind == "STRUCT":
			rest = rest[1:]
		default:
			return Type{}, rest, fmt.Errorf("expected > or , at %q", rest)
		}
	}
}

func TestParseCorpusTypes(t *testing.T) {
	for in, want := range map[string]string{
		"INT64":         "INT64",
		"ARRAY<STRING>": "ARRAY<STRING>",
		"ARRAY<STRUCT<key STRING, value STRUCT<s STRING, i INT64>>>": "ARRAY<STRUCT<key STRING, value STRUCT<s STRING, i INT64>>>",
	} {
		got, rest, err := parseType(in)
		if err != nil || rest != "" || got.String() != want {
			t.Errorf("%s: %s %q %v", in, got, rest, err)
		}
	}
	if _, err := parseColumn("x ARRAY<"); err == nil {
		t.Error("an unclosed ARRAY parsed")
	}
}
