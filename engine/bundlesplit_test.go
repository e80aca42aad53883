package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Every 3.x core we test splits, at protobufjs's static code, and both
// halves pass compileSplit's checks.
func TestSplitBundleAppliesToEveryCore(t *testing.T) {
	for _, v := range []string{"3.0.62", "3.0.59", "3.0.52"} {
		t.Run(v, func(t *testing.T) {
			path := testenv.CoreDir(t, v) + "/bundle.js"
			b, err := compileBundleNatives(path, v, true)
			if err != nil {
				t.Fatal(err)
			}
			if b.split == nil {
				t.Fatal("the bundle compiled whole")
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := splitBundle(string(src))
			if !ok {
				t.Fatal("no module to split out")
			}
			method := s.module[s.methodAt:s.methodEnd]
			if share := float64(len(method)) / float64(len(src)); share < 0.6 || !strings.Contains(method, ".encode=function") {
				t.Errorf("split out module %s (%.0f%% of the bundle), want protobufjs's static code", method[:strings.IndexByte(method, '(')], 100*share)
			}
		})
	}
}

// A split bundle compiles projects as the whole one does: the same graph,
// errors included, byte for byte except the line and column of frames
// inside bundle.js.
func TestSplitBundleCompilesTheSame(t *testing.T) {
	files := map[string]string{
		"workflow_settings.yaml":   "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"includes/consts.js":       "module.exports = { n: 3 };\n",
		"definitions/a.sqlx":       "config { type: \"table\", description: \"a\", columns: { x: \"the x\" } }\nSELECT ${consts.n} AS x",
		"definitions/b.sqlx":       "config { type: \"incremental\", bigquery: { partitionBy: \"d\" } }\nSELECT * FROM ${ref(\"a\")} ${when(incremental(), \"WHERE d > 1\")}",
		"definitions/c.js":         "publish(\"c\").jitCode(async (jctx) => ({ query: \"SELECT 1\" }));\nassert(\"c_ok\").query(\"SELECT 1\");\n",
		"definitions/bad.sqlx":     "config { type: \"table\", unknownKey: 1 }\nSELECT 1",
		"definitions/missing.sqlx": "SELECT * FROM ${ref(\"nowhere\")}",
		"definitions/throws.js":    "throw new Error(\"boom\");\n",
		"definitions/ops.sqlx":     "config { type: \"operations\", hasOutput: true }\nCREATE TABLE ${self()} AS SELECT 1",
	}
	for _, v := range []string{"3.0.62", "3.0.52"} {
		t.Run(v, func(t *testing.T) {
			root := testenv.WriteProject(t, v, files)
			path := filepath.Join(root, "node_modules/@dataform/core/bundle.js")
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			split, err := compileBundleSource(path, v, src, true, nil)
			if err != nil || split.split == nil {
				t.Fatalf("split compile: %v (split %v)", err, split != nil && split.split != nil)
			}
			code, _ := patchBundle(v, src, true)
			whole := &Bundle{Version: v, Path: path, digest: split.digest}
			if whole.program, err = goja.Compile(path, wrapModule(code), false); err != nil {
				t.Fatal(err)
			}
			var paths []string
			for name := range files {
				paths = append(paths, name)
			}
			got, want := compileWith(t, split, root, paths), compileWith(t, whole, root, paths)
			if len(want.GetGraphErrors().GetCompilationErrors()) < 3 {
				t.Fatalf("the project gave %d errors, want its three", len(want.GetGraphErrors().GetCompilationErrors()))
			}
			for _, g := range []*dataformpb.CompiledGraph{got, want} {
				for _, e := range g.GetGraphErrors().GetCompilationErrors() {
					e.Stack = withoutBundleFrames(e.Stack)
				}
			}
			if !proto.Equal(got, want) {
				t.Errorf("split bundle's graph\n%v\nwhole bundle's\n%v", got, want)
			}
		})
	}
}

func compileWith(t *testing.T, b *Bundle, root string, paths []string) *dataformpb.CompiledGraph {
	t.Helper()
	var resp dataformpb.CoreExecutionResponse
	if err := proto.Unmarshal(compileRaw(t, b, root, paths), &resp); err != nil {
		t.Fatal(err)
	}
	return resp.GetCompile().GetCompiledGraph()
}

// compileRaw compiles the project at root (its files at paths) on a new
// runtime of b and returns core's encoded response.
func compileRaw(t *testing.T, b *Bundle, root string, paths []string) []byte {
	t.Helper()
	rt, err := b.NewRuntime(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	req, err := proto.Marshal(&dataformpb.CoreExecutionRequest{Request: &dataformpb.CoreExecutionRequest_Compile{
		Compile: &dataformpb.CompileExecutionRequest{CompileConfig: &dataformpb.CompileConfig{ProjectDir: root, FilePaths: paths}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	files, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := rt.Compile(ctx, files, req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withoutBundleFrames drops the position of every stack frame in core's
// bundle.js, the one thing a split changes.
func withoutBundleFrames(stack string) string {
	lines := strings.Split(stack, "\n")
	for i, l := range lines {
		if j := strings.Index(l, "bundle.js:"); j >= 0 {
			lines[i] = l[:j] + "bundle.js"
		}
	}
	return strings.Join(lines, "\n")
}

// What only looks like a webpack bundle compiles whole, and works.
func TestSplitBundleRefusesOtherShapes(t *testing.T) {
	big := strings.Repeat("x.push(1);", 2000)
	for _, tc := range []struct {
		name, code string
		splits     bool // splitBundle finds a cut (that the checks must refuse)
	}{
		{"no module map", "module.exports = {compiler(){}};" + big, false},
		{"map not the first declaration", "(()=>{var a=1;var e={1(e,t,r){var x=[];" + big + "},2(e){e.exports=3}};module.exports={compiler(){}}})()", true},
		{"head inside a string", "var s='{1(e){';module.exports={compiler(){}};var x=[];" + big + "var q='},2(e){'", true},
		{"a directive before the runtime", "\"use strict\";(()=>{var e={1(e,t,r){var x=[];" + big + "},2(e){}};module.exports={compiler(){}}})()", true},
		{"head inside a nested object", "(()=>{var e={1(e,t,r){var o={5(a){var x=[];" + big + "},6(b){}};e.exports=o},2(e){}};module.exports={compiler(){}}})()", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := splitBundle(tc.code); ok != tc.splits {
				t.Fatalf("splitBundle found a cut: %v, want %v", ok, tc.splits)
			}
			if s, ok := splitBundle(tc.code); ok {
				if _, _, err := compileSplit("bundle.js", s); err == nil {
					t.Fatal("compileSplit accepted the cut")
				}
			}
			b, err := compileBundleSource("bundle.js", "3.0.62", []byte(tc.code), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b.split != nil {
				t.Error("compiled split")
			}
		})
	}
}
