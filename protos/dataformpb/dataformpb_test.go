package dataformpb_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

func TestCompiledGraphRoundTrip(t *testing.T) {
	in := &dataformpb.CompiledGraph{
		ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "proj", DefaultSchema: "dataform"},
		Tables: []*dataformpb.Table{{
			Target:         &dataformpb.Target{Database: "proj", Schema: "dataform", Name: "orders"},
			EnumType:       dataformpb.TableType_INCREMENTAL,
			Query:          "select 1 as x",
			UniqueKey:      []string{"x"},
			Tags:           []string{"daily"},
			OnSchemaChange: dataformpb.OnSchemaChange_EXTEND,
			ActionDescriptor: &dataformpb.ActionDescriptor{
				Description:    "orders",
				BigqueryLabels: map[string]string{"team": "data"},
			},
			FileName: "definitions/orders.sqlx",
		}},
		DataformCoreVersion: "3.0.62",
	}
	b, err := proto.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := new(dataformpb.CompiledGraph)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Fatalf("round trip mismatch:\n in: %v\nout: %v", in, out)
	}
	if got := out.GetTables()[0].GetTarget().GetName(); got != "orders" {
		t.Errorf("table name = %q", got)
	}
}

func TestJitCompilationRequestRoundTrip(t *testing.T) {
	data, err := structpb.NewStruct(map[string]any{"k": "v", "n": 1.5, "l": []any{true, nil}})
	if err != nil {
		t.Fatal(err)
	}
	in := &dataformpb.JitCompilationRequest{
		Target:                &dataformpb.Target{Schema: "s", Name: "t"},
		Dependencies:          []*dataformpb.Target{{Schema: "s", Name: "dep"}},
		JitCode:               "async (ctx) => `select 1`",
		JitData:               data,
		CompilationTargetType: dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE,
		FilePaths:             []string{"includes/a.js"},
	}
	b, err := proto.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := new(dataformpb.JitCompilationRequest)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Fatalf("round trip mismatch:\n in: %v\nout: %v", in, out)
	}
}
