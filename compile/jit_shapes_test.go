package compile_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/jitprobe"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/project"
)

// TestJitParityFunctionShapes runs the JiT actions of the
// jit_function_shapes fixture, whose jitCode is the text of functions that
// goja used to cut short (arrow functions with a parenthesised body, …): the
// jitCode dfd compiles must be the official CLI's, byte for byte, and running
// it must give, in dfd's engine, core's jitCompiler in Node and the CLI's own
// JiT worker, the same response.
func TestJitParityFunctionShapes(t *testing.T) {
	node := testenv.Node(t) // it runs core's jitCompiler in Node as the oracle
	oracle, err := filepath.Abs(filepath.Join("testdata", "jit_oracle.js"))
	if err != nil {
		t.Fatal(err)
	}
	cliModules := filepath.Dir(filepath.Dir(filepath.Dir(testenv.CLIBundle(t))))

	for _, v := range jitCores {
		t.Run("core "+v, func(t *testing.T) {
			root := testenv.ProjectCopy(t, testenv.Fixture(jitprobe.ShapesFixture), v)
			p, err := project.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			bundlePath := filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
			core := &project.Core{Version: v, Dir: filepath.Dir(bundlePath), BundlePath: bundlePath}
			res, err := compile.Run(context.Background(), p, core, compile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if errs := res.Errors(); len(errs) > 0 {
				t.Fatalf("the fixture has compilation errors: %v", errs)
			}
			bundle, err := engine.LoadBundle(bundlePath, v)
			if err != nil {
				t.Fatal(err)
			}
			files, err := engine.OpenDir(root)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { files.Close() })
			env := &jitEnv{core: v, root: root, bundle: bundle, bundlePath: bundlePath, files: files, res: res,
				node: node, oracle: oracle, cliModules: cliModules, warehouse: newJitWarehouse(time.Now())}

			var jitActions []string
			for _, tb := range res.Graph.GetTables() {
				if tb.GetJitCode() != "" {
					jitActions = append(jitActions, tb.GetTarget().GetName())
				}
			}
			for _, o := range res.Graph.GetOperations() {
				if o.GetJitCode() != "" {
					jitActions = append(jitActions, o.GetTarget().GetName())
				}
			}
			for _, a := range res.Graph.GetAssertions() {
				if a.GetJitCode() != "" {
					jitActions = append(jitActions, a.GetTarget().GetName())
				}
			}
			if strings.Join(sortedStrings(jitActions), ",") != strings.Join(sortedStrings(jitprobe.ShapeActions), ",") {
				t.Fatalf("JiT actions of the graph %v, jitprobe.ShapeActions %v", jitActions, jitprobe.ShapeActions)
			}

			cliCode := cliJitCodes(t, node, root)
			st := &jitStats{methods: map[string]int{}}
			t.Run("cases", func(t *testing.T) {
				for _, name := range jitprobe.ShapeActions {
					t.Run(name+"/cli-jitcode", func(t *testing.T) {
						a, err := compile.FindAction(res.Graph, name)
						if err != nil {
							t.Fatal(err)
						}
						code, ok := cliCode[a.Target.GetDatabase()+"."+a.Target.GetSchema()+"."+a.Target.GetName()]
						if !ok {
							t.Fatalf("the CLI's graph has no jitCode for %s", a.Name())
						}
						if code != a.JitCode {
							t.Errorf("jitCode differs from the CLI's:\ncli: %q\ndfd: %q", code, a.JitCode)
						}
					})
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						env.run(t, jitCase{action: name, worker: true}, st)
					})
					t.Run(name+"/execution-data", func(t *testing.T) {
						t.Parallel()
						env.run(t, jitCase{action: name, executionData: true}, st)
					})
				}
			})
			if total := 2 * len(jitprobe.ShapeActions); st.succeeded+st.failed < total {
				t.Logf("%d of %d cases ran: coverage not checked", st.succeeded+st.failed, total)
				return
			}
			for _, m := range []string{"GetTable", "Execute"} {
				if st.methods[m] == 0 {
					t.Errorf("no case called %s", m)
				}
			}
			t.Logf("core %s: %d cases (%d succeeded, %d failed), %d also in the CLI's worker, %d requests identical to the CLI's, adapter calls %v",
				v, st.succeeded+st.failed, st.succeeded, st.failed, st.workerRuns, st.requestsCompared, st.methods)
		})
	}
}
