package changes

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/sqlcheck"
)

// A revision made by hand: tables with their SQL, inferred columns and
// lineage as a check would give them. (The command's tests compare real
// compiles and analyses; this one pins the comparison's rules.)
type table struct {
	name, file, typ, sql, partition string
	deps                            []string
	cols                            []col
	tags                            []string
	err                             string // an error of its analysis: then no schema
}

type col struct {
	name, typ string
	reads     []string // "table.column", as gsql.Input
}

func tp(kind string) gsql.Type {
	if elem, ok := strings.CutPrefix(kind, "ARRAY<"); ok {
		e := gsql.Type{Kind: strings.TrimSuffix(elem, ">")}
		return gsql.Type{Kind: "ARRAY", Elem: &e}
	}
	return gsql.Type{Kind: kind}
}

func revision(label string, tables ...table) Revision {
	g := &dataformpb.CompiledGraph{ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "p"}}
	res := &sqlcheck.Result{Schemas: map[string][]gsql.Column{}, Lineage: map[string][]gsql.ColumnLineage{}}
	for _, t := range tables {
		et := dataformpb.TableType_TABLE
		switch t.typ {
		case "view":
			et = dataformpb.TableType_VIEW
		case "incremental":
			et = dataformpb.TableType_INCREMENTAL
		}
		pb := &dataformpb.Table{Target: &dataformpb.Target{Database: "p", Schema: "d", Name: t.name}, EnumType: et,
			Query: t.sql, FileName: t.file, Tags: t.tags, Bigquery: &dataformpb.BigQueryOptions{PartitionBy: t.partition}}
		if et == dataformpb.TableType_INCREMENTAL {
			pb.IncrementalQuery = t.sql
		}
		for _, d := range t.deps {
			pb.DependencyTargets = append(pb.DependencyTargets, &dataformpb.Target{Database: "p", Schema: "d", Name: d})
		}
		g.Tables = append(g.Tables, pb)
		path := "p.d." + t.name
		if t.err != "" {
			res.Findings = append(res.Findings, sqlcheck.Finding{File: t.file, Severity: sqlcheck.Error, Message: t.err, Action: path})
			continue
		}
		for _, c := range t.cols {
			res.Schemas[path] = append(res.Schemas[path], gsql.Column{Name: c.name, Type: tp(c.typ)})
			l := gsql.ColumnLineage{Name: c.name, Type: tp(c.typ)}
			for _, r := range c.reads {
				i := strings.LastIndexByte(r, '.')
				l.Inputs = append(l.Inputs, gsql.Input{Table: "p.d." + r[:i], Column: r[i+1:], Identity: true})
			}
			res.Lineage[path] = append(res.Lineage[path], l)
		}
	}
	return Revision{Label: label, Graph: g, Check: res}
}

// summary is each change as "name status category [columns] [config] [impact]".
func summary(rep *Report) []string {
	var out []string
	for _, c := range rep.Changes {
		s := c.Action[strings.LastIndexByte(c.Action, '.')+1:] + " " + c.Status + " " + string(c.Category)
		var parts []string
		for _, col := range c.Columns {
			parts = append(parts, "col "+col.Column+":"+col.Change)
		}
		for _, cf := range c.Config {
			p := "cfg " + cf.Field
			if cf.FullRefresh {
				p += "!"
			}
			parts = append(parts, p)
		}
		for _, im := range c.Impact {
			parts = append(parts, "reader "+im.Action[strings.LastIndexByte(im.Action, '.')+1:]+"."+im.Column+"@"+itoa(im.Depth))
		}
		sort.Strings(parts)
		if len(parts) > 0 {
			s += " [" + strings.Join(parts, ", ") + "]"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func itoa(n int) string { return string(rune('0' + n)) }

func TestCompare(t *testing.T) {
	src := table{name: "src", file: "definitions/src.sqlx", typ: "table", sql: "SELECT a, b FROM `w.x.y`",
		cols: []col{{"a", "INT64", []string{"y.a"}}, {"b", "STRING", []string{"y.b"}}}}
	mid := table{name: "mid", file: "definitions/mid.sqlx", typ: "view", sql: "SELECT a AS a2, b FROM `p.d.src`", deps: []string{"src"},
		cols: []col{{"a2", "INT64", []string{"src.a"}}, {"b", "STRING", []string{"src.b"}}}}
	top := table{name: "top", file: "definitions/top.sqlx", typ: "view", sql: "SELECT a2 FROM `p.d.mid`", deps: []string{"mid"},
		cols: []col{{"a2", "INT64", []string{"mid.a2"}}}}
	with := func(t table, f func(*table)) table {
		t.cols = append([]col(nil), t.cols...) // the original's stay as they are
		f(&t)
		return t
	}
	// w.x.y's columns as src reads them (a warehouse table: no own lineage).
	for _, tc := range []struct {
		name       string
		base, head []table
		want       []string
	}{
		{"nothing", []table{src, mid}, []table{src, mid}, nil},
		{"layout only", []table{src}, []table{with(src, func(t *table) { t.sql = "select a,\n  b\nfrom `w.x.y` -- the source" })},
			[]string{"src modified metadata-only"}},
		{"column renamed, read two hops down", []table{src, mid, top},
			[]table{with(src, func(t *table) {
				t.sql = "SELECT a AS a1, b FROM `w.x.y`"
				t.cols = []col{{"a1", "INT64", []string{"y.a"}}, {"b", "STRING", []string{"y.b"}}}
			}), with(mid, func(t *table) { t.err = "Unrecognized name: a" }), top},
			[]string{"src modified breaking [col a1:renamed, reader mid.a2@1, reader top.a2@2]"}},
		{"same name, other input: removed and added", []table{src, mid},
			[]table{with(src, func(t *table) {
				t.sql = "SELECT b AS a1, b FROM `w.x.y`"
				t.cols = []col{{"a1", "STRING", []string{"y.b"}}, {"b", "STRING", []string{"y.b"}}}
			}), with(mid, func(t *table) { t.err = "Unrecognized name: a" })},
			[]string{"src modified breaking [col a1:added, col a:removed, reader mid.a2@1]"}},
		{"retyped, nothing reads it", []table{src, mid},
			[]table{with(src, func(t *table) {
				t.sql = "SELECT a, CAST(b AS INT64) AS b FROM `w.x.y`"
				t.cols = []col{{"a", "INT64", []string{"y.a"}}, {"b", "INT64", []string{"y.b"}}}
			}), with(mid, func(t *table) {
				t.sql = "SELECT a AS a2 FROM `p.d.src`"
				t.cols = t.cols[:1]
			})},
			[]string{"mid modified non-breaking [col b:removed]", "src modified non-breaking [col b:type]"}},
		{"mode", []table{src}, []table{with(src, func(t *table) {
			t.sql = "SELECT a, [b] AS b FROM `w.x.y`"
			t.cols = []col{{"a", "INT64", []string{"y.a"}}, {"b", "ARRAY<STRING>", []string{"y.b"}}}
		})}, []string{"src modified non-breaking [col b:mode]"}},
		{"column renamed, the reader updated", []table{src, mid, top},
			[]table{with(src, func(t *table) {
				t.sql = "SELECT a AS a1, b FROM `w.x.y`"
				t.cols = []col{{"a1", "INT64", []string{"y.a"}}, {"b", "STRING", []string{"y.b"}}}
			}), with(mid, func(t *table) {
				t.sql = "SELECT a1 AS a2, b FROM `p.d.src`"
				t.cols = []col{{"a2", "INT64", []string{"src.a1"}}, {"b", "STRING", []string{"src.b"}}}
			}), top},
			[]string{"mid modified non-breaking", "src modified non-breaking [col a1:renamed]"}},
		{"retyped, read downstream", []table{src, mid},
			[]table{with(src, func(t *table) {
				t.sql = "SELECT CAST(a AS STRING) AS a, b FROM `w.x.y`"
				t.cols = []col{{"a", "STRING", []string{"y.a"}}, {"b", "STRING", []string{"y.b"}}}
			}), with(mid, func(t *table) { t.cols[0].typ = "STRING" })},
			[]string{"mid modified non-breaking [col a2:type]", "src modified breaking [col a:type, reader mid.a2@1]"}},
		{"action renamed, same file and SQL", []table{src, mid},
			[]table{with(src, func(t *table) { t.name = "source" }), with(mid, func(t *table) { t.deps = []string{"source"}; t.sql = "SELECT a AS a2, b FROM `p.d.source`" })},
			[]string{"mid modified non-breaking [cfg dependencies]", "source renamed non-breaking"}},
		{"action renamed, the reader not updated", []table{src, mid},
			[]table{with(src, func(t *table) { t.name = "source" }), with(mid, func(t *table) { t.cols = nil })},
			[]string{"source renamed breaking [reader mid.a2@1, reader mid.b@1]"}},
		{"action removed, nothing reads it", []table{src, top}, []table{src}, []string{"top removed non-breaking"}},
		{"partitioning of an incremental table", []table{with(src, func(t *table) { t.typ = "incremental"; t.partition = "a" })},
			[]table{with(src, func(t *table) { t.typ = "incremental"; t.partition = "b" })},
			[]string{"src modified breaking [cfg partitionBy!]"}},
		{"partitioning of a table: rebuilt every run", []table{with(src, func(t *table) { t.partition = "a" })},
			[]table{with(src, func(t *table) { t.partition = "b" })},
			[]string{"src modified non-breaking [cfg partitionBy]"}},
		{"tags", []table{src}, []table{with(src, func(t *table) { t.tags = []string{"daily"} })},
			[]string{"src modified metadata-only [cfg tags]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Compare(context.Background(), revision("base", tc.base...), revision("head", tc.head...))
			if err != nil {
				t.Fatal(err)
			}
			got := summary(rep)
			sort.Strings(tc.want)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestTypeChange(t *testing.T) {
	for _, tc := range []struct{ b, h, kind, from, to string }{
		{"INT64", "INT64", "", "", ""},
		{"INT64", "STRING", ColumnType, "INT64", "STRING"},
		{"STRING", "ARRAY<STRING>", ColumnMode, "NULLABLE", "REPEATED"},
		{"ARRAY<STRING>", "STRING", ColumnMode, "REPEATED", "NULLABLE"},
		{"ARRAY<STRING>", "ARRAY<INT64>", ColumnType, "ARRAY<STRING>", "ARRAY<INT64>"},
	} {
		kind, from, to := typeChange(tp(tc.b), tp(tc.h))
		if kind != tc.kind || from != tc.from || to != tc.to {
			t.Errorf("%s → %s: %q %q %q, want %q %q %q", tc.b, tc.h, kind, from, to, tc.kind, tc.from, tc.to)
		}
	}
}
