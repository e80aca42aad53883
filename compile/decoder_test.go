package compile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/internal/testkit/incrtest"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// compiledResponses compiles a generated project (real core, on goja)
// as it is, after an edit of one table's SQL, after an edit that breaks
// its config (the action leaves the graph, a compilation error comes),
// and as it was; it returns core's responses, encoded as main() returns
// them.
func compiledResponses(t testing.TB) [][]byte {
	t.Helper()
	root, _, table := incrtest.Generated(t, 60, 1)
	p, err := project.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	core, err := (&project.CoreResolver{}).Resolve(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, table)
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(orig), "config {", "config {\n  descripton: \"x\",", 1)
	var out [][]byte
	for _, content := range []string{string(orig), string(orig) + "\n-- edited", broken, string(orig)} {
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Run(ctx, p, core, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, appendMessageField(nil, 1, appendMessageField(nil, 1, res.GraphWire)))
	}
	return out
}

// A Decoder decodes what Decode decodes, and shares the messages of the
// actions whose bytes did not change.
func TestDecoderSharesUnchangedActions(t *testing.T) {
	resps := compiledResponses(t)
	d := &Decoder{Verify: true}
	var prev *dataformpb.CompiledGraph
	for i, resp := range resps {
		want, err := Decode(resp)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(resp)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if !proto.Equal(got.Graph, want.Graph) || string(got.GraphWire) != string(want.GraphWire) {
			t.Fatalf("response %d: the Decoder's graph differs from Decode's", i)
		}
		if prev != nil {
			shared, same := 0, 0
			old := map[*dataformpb.Table]bool{}
			oldBytes := map[string]bool{}
			for _, x := range prev.GetTables() {
				old[x] = true
				b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(x)
				oldBytes[string(b)] = true
			}
			for _, x := range got.Graph.GetTables() {
				if old[x] {
					shared++
				}
				b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(x)
				if oldBytes[string(b)] {
					same++
				}
			}
			// Every table the edit left alone is shared, and only those; an
			// edit of one table's SQL leaves all the others alone.
			if shared == 0 || shared != same || i == 1 && shared != len(got.Graph.GetTables())-1 {
				t.Errorf("response %d: %d of %d tables shared, %d unchanged", i, shared, len(got.Graph.GetTables()), same)
			}
		}
		prev = got.Graph
	}
	if n := len(prev.GetGraphErrors().GetCompilationErrors()); n != 0 {
		t.Errorf("the last response has %d compilation errors", n)
	}

	// A shared message written to is found by a verifying decode.
	prev.GetTables()[0].Query = "select 'written'"
	if _, err := d.Decode(resps[len(resps)-1]); !errors.Is(err, ErrSharedWritten) {
		t.Errorf("decoding after a write to a shared table: %v, want ErrSharedWritten", err)
	}
}

// Any bytes decode, or fail, as Decode has them, also when the Decoder
// has kept the messages of an earlier response. The seeds are small
// graphs built here, so that fuzzing starts at once (a compile in every
// fuzzing process took minutes with coverage instrumentation); the kept
// corpus has a real one. One seed has a table's bytes as an operation: a
// Decoder that kept messages by their bytes alone gave a Table for it.
func FuzzDecoder(f *testing.F) {
	target := func(name string) *dataformpb.Target {
		return &dataformpb.Target{Database: "p", Schema: "s", Name: name}
	}
	kept := &dataformpb.CompiledGraph{
		ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "p", DefaultSchema: "s"},
		Tables:        []*dataformpb.Table{{Target: target("a"), Query: "select 1", FileName: "definitions/a.sqlx"}},
		Operations:    []*dataformpb.Operation{{Target: target("o"), Queries: []string{"select 2"}}},
		Assertions:    []*dataformpb.Assertion{{Target: target("c"), Query: "select 3"}},
		GraphErrors:   &dataformpb.GraphErrors{CompilationErrors: []*dataformpb.CompilationError{{FileName: "x.js", Message: "boom"}}},
	}
	response := func(g *dataformpb.CompiledGraph) []byte {
		b, err := proto.Marshal(g)
		if err != nil {
			f.Fatal(err)
		}
		return appendMessageField(nil, 1, appendMessageField(nil, 1, b))
	}
	seed := response(kept)
	f.Add(seed)
	edited := proto.Clone(kept).(*dataformpb.CompiledGraph)
	edited.Tables = append(edited.Tables, &dataformpb.Table{Target: target("b"), Query: "select 4"})
	edited.Assertions = nil
	f.Add(response(edited))
	table, err := proto.Marshal(kept.Tables[0])
	if err != nil {
		f.Fatal(err)
	}
	graph := appendMessageField(appendMessageField(nil, 1, table), 2, table) // tables (1), operations (2)
	f.Add(appendMessageField(nil, 1, appendMessageField(nil, 1, graph)))
	f.Fuzz(func(t *testing.T, resp []byte) {
		want, wantErr := Decode(resp)
		d := &Decoder{Verify: true}
		if _, err := d.Decode(seed); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := d.Decode(resp)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("Decoder: %v; Decode: %v", err, wantErr)
			}
			if err == nil && !proto.Equal(got.Graph, want.Graph) {
				t.Fatal("the Decoder's graph differs from Decode's")
			}
		}
	})
}
