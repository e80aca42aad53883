package source

import "testing"

// SQLXConfig gives the config's strings with where their values are, and
// quoted keys' names inside the quotes.
func TestSQLXConfig(t *testing.T) {
	text := []byte("config {\n  type: \"table\",\n  uniqueKey: [\"order_id\", `k_${x}`],\n  \"columns\": { order_id: \"the id\" },\n  bigquery: { partitionBy: f() }\n}\nSELECT 1")
	cfg, ok := SQLXConfig(text)
	if !ok || cfg.Kind != ConfigObject {
		t.Fatalf("no config object: %+v", cfg)
	}
	uk, ok := cfg.Field("uniqueKey")
	if !ok || uk.Value.Kind != ConfigArray || len(uk.Value.Elems) != 2 {
		t.Fatalf("uniqueKey %+v", uk)
	}
	e := uk.Value.Elems[0]
	if e.Kind != ConfigString || !e.Plain || string(text[e.Str.Span.Start:e.Str.Span.End]) != "order_id" {
		t.Errorf("first key %+v", e)
	}
	if uk.Value.Elems[1].Plain {
		t.Errorf("a template with ${…} is not plain: %+v", uk.Value.Elems[1])
	}
	cols, ok := cfg.Field("columns")
	if !ok || !cols.KeyQuoted || string(text[cols.KeyName.Start:cols.KeyName.End]) != "columns" {
		t.Fatalf("columns %+v", cols)
	}
	if f := cols.Value.Fields[0]; f.Key != "order_id" || f.KeyQuoted || string(text[f.KeyName.Start:f.KeyName.End]) != "order_id" {
		t.Errorf("columns key %+v", f)
	}
	bq, _ := cfg.Field("bigquery")
	if pb, ok := bq.Value.Field("partitionBy"); !ok || pb.Value.Kind != ConfigOther {
		t.Errorf("a call is Other: %+v", pb)
	}
}
