package compile

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

func TestParseVarsKeepsTheirOrder(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Var
	}{
		{"", nil},
		{"b=2,a=1", []Var{{"b", "2"}, {"a", "1"}}},
		{"a=1,b=2,a=3", []Var{{"a", "3"}, {"b", "2"}}},
		{"a=b=c,x", []Var{{"a", "b"}, {"x", ""}}},
	} {
		if got := ParseVars(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseVars(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// Core prints the override's vars in the order of its request's map
// entries (protobufjs reads them in order), so Request writes them in the
// order given, every time; the rest decodes as the message it was.
func TestRequestWritesVarsInOrder(t *testing.T) {
	vars := []Var{{"zeta", "1"}, {"alpha", "2"}, {"mid", "3"}, {"beta", "4"}}
	for i := 0; i < 20; i++ { // Go's map order would differ between runs
		b, err := Request("/p", []string{"definitions/a.sqlx"}, Overrides{DefaultSchema: "s", Vars: vars}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var req dataformpb.CoreExecutionRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		cfg := req.GetCompile().GetCompileConfig()
		if cfg.GetProjectDir() != "/p" || len(cfg.GetFilePaths()) != 1 || cfg.GetTimeoutMillis() != 60000 || cfg.GetProjectConfigOverride().GetDefaultSchema() != "s" {
			t.Fatalf("decoded %v", cfg)
		}
		if u := cfg.ProtoReflect().GetUnknown(); len(u) > 0 {
			t.Fatalf("unknown fields in the compile config: %x", u)
		}
		if got := wireVarNames(t, b); !reflect.DeepEqual(got, []string{"zeta", "alpha", "mid", "beta"}) {
			t.Fatalf("vars on the wire in the order %v", got)
		}
	}
}

// wireVarNames reads the keys of ProjectConfig.vars in wire order.
func wireVarNames(t *testing.T, b []byte) []string {
	t.Helper()
	msg := b
	// The numbers from the descriptors, not Request's constants.
	for _, f := range []struct {
		m    proto.Message
		name string
	}{
		{&dataformpb.CoreExecutionRequest{}, "compile"},
		{&dataformpb.CompileExecutionRequest{}, "compile_config"},
		{&dataformpb.CompileConfig{}, "project_config_override"},
	} {
		var err error
		if msg, err = lastField(msg, fieldNumber(f.m, f.name)); err != nil {
			t.Fatal(err)
		}
	}
	varsNum := fieldNumber(&dataformpb.ProjectConfig{}, "vars")
	var names []string
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		msg = msg[n:]
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if num == varsNum {
			entry, _ := protowire.ConsumeBytes(msg)
			key, err := lastField(entry, 1)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, string(key))
		}
		msg = msg[n:]
	}
	return names
}

// fieldNumber is the number of m's field name.
func fieldNumber(m proto.Message, name string) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name)).Number()
}
