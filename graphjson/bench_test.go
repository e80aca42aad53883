package graphjson

import (
	"fmt"
	"testing"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// benchGraph returns the wire bytes of a CompiledGraph with n realistic
// tables (plus a few assertions and declarations).
func benchGraph(tb testing.TB, n int) []byte {
	g := &dataformpb.CompiledGraph{
		ProjectConfig: &dataformpb.ProjectConfig{
			Warehouse:       "bigquery",
			DefaultDatabase: "my-project",
			DefaultSchema:   "dataform",
			DefaultLocation: "US",
			Vars:            map[string]string{"env": "prod", "1": "one"},
		},
		DataformCoreVersion: "3.0.62",
	}
	for i := range n {
		name := fmt.Sprintf("table_%04d", i)
		tgt := &dataformpb.Target{Database: "my-project", Schema: "dataform", Name: name}
		t := &dataformpb.Table{
			Target:          tgt,
			CanonicalTarget: tgt,
			EnumType:        dataformpb.TableType(1 + i%3),
			Query:           fmt.Sprintf("SELECT\n  id,\n  \"name\" AS n,\n  ts\nFROM `my-project.raw.src_%d`\nWHERE ts > '2020-01-01'\n", i),
			Tags:            []string{"daily", fmt.Sprintf("group_%d", i%10)},
			FileName:        fmt.Sprintf("definitions/%s.sqlx", name),
			Hermeticity:     dataformpb.ActionHermeticity_HERMETIC,
			ActionDescriptor: &dataformpb.ActionDescriptor{
				Description: "Table " + name + " — generated for the benchmark",
				Columns: []*dataformpb.ColumnDescriptor{
					{Path: []string{"id"}, Description: "primary key"},
					{Path: []string{"name"}, Description: "display name"},
				},
				BigqueryLabels: map[string]string{"team": "data", "tier": fmt.Sprint(i % 3)},
			},
			Bigquery: &dataformpb.BigQueryOptions{PartitionBy: "DATE(ts)", ClusterBy: []string{"id"}},
		}
		if i > 0 {
			t.DependencyTargets = []*dataformpb.Target{{Database: "my-project", Schema: "dataform", Name: fmt.Sprintf("table_%04d", i-1)}}
		}
		if t.EnumType == dataformpb.TableType_INCREMENTAL {
			t.IncrementalQuery = t.Query + "AND ts > (SELECT MAX(ts) FROM self)\n"
			t.UniqueKey = []string{"id"}
			t.PreOps = []string{"DECLARE x INT64 DEFAULT 1"}
		}
		g.Tables = append(g.Tables, t)
		if i%10 == 0 {
			g.Assertions = append(g.Assertions, &dataformpb.Assertion{
				Target:            &dataformpb.Target{Database: "my-project", Schema: "assertions", Name: name + "_rowConditions"},
				Query:             "SELECT 1 WHERE FALSE",
				DependencyTargets: []*dataformpb.Target{tgt},
				FileName:          fmt.Sprintf("definitions/%s.sqlx", name),
			})
			g.Declarations = append(g.Declarations, &dataformpb.Declaration{
				Target: &dataformpb.Target{Database: "my-project", Schema: "raw", Name: fmt.Sprintf("src_%d", i)},
			})
		}
	}
	return mustMarshal(tb, g)
}

func BenchmarkMarshal(b *testing.B) {
	wire := benchGraph(b, 1000)
	md := (&dataformpb.CompiledGraph{}).ProtoReflect().Descriptor()
	out, err := Marshal(md, wire)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(md, wire); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(wire)), "wire-bytes")
	b.ReportMetric(float64(len(out)), "json-bytes")
}
