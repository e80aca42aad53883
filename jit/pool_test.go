package jit_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

var smallProject = map[string]string{
	"definitions/raw.sqlx":     "config { type: \"declaration\" }\n",
	"definitions/orders.sqlx":  "config { type: \"table\", description: \"orders\" }\nselect id, ${helpers.double(\"amount\")} as amount from ${ref(\"raw\")}\n",
	"definitions/totals.sqlx":  "config { type: \"view\" }\nselect sum(amount) as total from ${ref(\"orders\")}\n",
	"definitions/checks.sqlx":  "config { type: \"assertion\" }\nselect * from ${ref(\"orders\")} where id is null\n",
	"definitions/generated.js": "for (const n of [1, 2]) { publish(`gen_${n}`).query(ctx => `select ${n} as n`); }\n",
	"includes/helpers.js":      "function double(c) { return `${c} * 2`; }\nmodule.exports = { double };\n",
}

func filePaths(files map[string]string) []string {
	paths := []string{"workflow_settings.yaml"}
	for name := range files {
		paths = append(paths, name)
	}
	sort.Strings(paths)
	return paths
}

// compileInProcess is the reference: the engine in this process.
func compileInProcess(t *testing.T, root string, overlay map[string][]byte, req []byte) []byte {
	t.Helper()
	b, err := engine.LoadBundle(workertest.BundlePath(root), testenv.CoreVersion)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := b.NewRuntime(engine.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := engine.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	var files engine.Files = dir
	if overlay != nil {
		o := &engine.Overlay{Base: dir}
		for k, v := range overlay {
			o.Set(k, v)
		}
		files = o
	}
	out, err := rt.Compile(context.Background(), files, req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompileMatchesInProcess(t *testing.T) {
	root := workertest.Project(t, smallProject)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	ctx := context.Background()

	t.Run("disk", func(t *testing.T) {
		req, err := compile.Request(root, filePaths(smallProject), compile.Overrides{}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		want := compileInProcess(t, root, nil, req)
		res, err := p.Compile(ctx, jit.CompileJob{Request: req})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Response, want) {
			t.Fatalf("worker response (%d bytes) differs from in-process (%d bytes)", len(res.Response), len(want))
		}
		g := graph(t, res.Response)
		if n := len(g.GetTables()); n != 4 {
			t.Errorf("%d tables, want 4 (orders, totals, gen_1, gen_2)", n)
		}
		t.Logf("stats: %+v", res.Stats)
	})

	t.Run("overlay", func(t *testing.T) {
		// An edited buffer and a new, never saved file.
		overlay := map[string][]byte{
			"definitions/orders.sqlx": []byte("config { type: \"table\" }\nselect id, 'edited' as state from ${ref(\"raw\")}\n"),
			"definitions/draft.sqlx":  []byte("config { type: \"view\" }\nselect * from ${ref(\"totals\")}\n"),
		}
		paths := append(filePaths(smallProject), "definitions/draft.sqlx")
		req, err := compile.Request(root, paths, compile.Overrides{DefaultSchema: "dev"}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		want := compileInProcess(t, root, overlay, req)
		res, err := p.Compile(ctx, jit.CompileJob{Request: req, Overlay: overlay})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Response, want) {
			t.Fatal("worker response differs from in-process")
		}
		var edited, draft bool
		for _, tb := range graph(t, res.Response).GetTables() {
			switch tb.GetTarget().GetName() {
			case "orders":
				edited = strings.Contains(tb.GetQuery(), "'edited' as state")
			case "draft":
				draft = tb.GetTarget().GetSchema() == "dev"
			}
		}
		if !edited || !draft {
			t.Errorf("overlay not compiled: edited=%v draft=%v", edited, draft)
		}
	})

	t.Run("compilation errors are results", func(t *testing.T) {
		overlay := map[string][]byte{"definitions/totals.sqlx": []byte("config { type: \"view\" }\nselect * from ${ref(\"nope\")}\n")}
		req, _ := compile.Request(root, filePaths(smallProject), compile.Overrides{}, time.Minute)
		res, err := p.Compile(ctx, jit.CompileJob{Request: req, Overlay: overlay})
		if err != nil {
			t.Fatal(err)
		}
		errs := graph(t, res.Response).GetGraphErrors().GetCompilationErrors()
		if len(errs) == 0 || !strings.Contains(errs[0].GetMessage(), "nope") {
			t.Errorf("compilation errors %v, want one about the missing ref", errs)
		}
	})
}

func graph(t *testing.T, resp []byte) *dataformpb.CompiledGraph {
	t.Helper()
	var r dataformpb.CoreExecutionResponse
	if err := proto.Unmarshal(resp, &r); err != nil {
		t.Fatal(err)
	}
	return r.GetCompile().GetCompiledGraph()
}

func TestJit(t *testing.T) {
	root := workertest.Project(t, nil)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	cases := []struct {
		name, code, query string
		calls             int64
	}{
		{"0 adapter calls", workertest.JitNoCalls, "select 1 from `proj.ds.t`", 0},
		{"3 adapter calls", workertest.JitThreeCalls, "select id, amount -- 2", 3},
		{"3 calls in flight at once", workertest.JitParallel, "select 3", 3},
		{"caught adapter error", workertest.JitCaught, `select "NOT_FOUND: table missing not found"`, 1},
		{"CLI-compiled catch", workertest.JitCLICompiled, "select 2", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &workertest.Adapter{}
			res, err := p.Jit(context.Background(), workertest.JitJob(c.code), a.RPC)
			if err != nil {
				t.Fatal(err)
			}
			if got := workertest.Query(t, res); got != c.query {
				t.Errorf("query %q, want %q", got, c.query)
			}
			if n := a.Calls.Load(); n != c.calls {
				t.Errorf("%d adapter calls, want %d", n, c.calls)
			}
		})
	}

	t.Run("uncaught adapter error", func(t *testing.T) {
		_, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitUncaught), (&workertest.Adapter{}).RPC)
		var we *jit.WorkerError
		if !errors.As(err, &we) || we.Code != jit.CodeScript || !strings.Contains(we.Message, "NOT_FOUND: table gone not found") {
			t.Fatalf("err = %#v, want a script error with the adapter's message", err)
		}
	})

	t.Run("console output reaches the job's Log", func(t *testing.T) {
		var mu sync.Mutex
		var lines []string
		job := workertest.JitJob(workertest.JitConsole)
		job.Log = func(level, msg string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, level+": "+msg)
		}
		if _, err := p.Jit(context.Background(), job, nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(lines, "\n") != "log: hello from jit\nwarn: {\"a\":1}" {
			t.Errorf("console lines %q", lines)
		}
	})

	t.Run("no adapter given", func(t *testing.T) {
		_, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitUncaught), nil)
		if err == nil || !strings.Contains(err.Error(), "no database adapter") {
			t.Fatalf("err = %v", err)
		}
	})

	if n := p.Started(); n != 1 {
		t.Errorf("%d workers started, want 1: every request above should leave the worker usable", n)
	}
}

// TestDfdWorkerCommand runs the real `dfd worker` command of a freshly built
// dfd binary, as the daemon does.
func TestDfdWorkerCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/dfd")
	}
	bin := dfdBinary(t)
	root := workertest.Project(t, smallProject)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Command: []string{bin, "worker"}, Env: []string{"GOTRACEBACK=single"}})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitThreeCalls), (&workertest.Adapter{}).RPC)
	if err != nil {
		t.Fatal(err)
	}
	if q := workertest.Query(t, res); q != "select id, amount -- 2" {
		t.Errorf("query %q", q)
	}
	req, _ := compile.Request(root, filePaths(smallProject), compile.Overrides{}, time.Minute)
	res, err = p.Compile(context.Background(), jit.CompileJob{Request: req})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Response, compileInProcess(t, root, nil, req)) {
		t.Error("dfd worker's compile differs from in-process")
	}
}

func TestPools(t *testing.T) {
	root := workertest.Project(t, nil)
	r := jit.NewPools(jit.PoolOptions{Workers: 1, Command: []string{os.Args[0], "worker"}, Env: []string{helperEnv + "=worker"}, Logger: workertest.Logger(t)})
	defer r.Close()
	k := jit.Key{Root: root, BundlePath: workertest.BundlePath(root), CoreVersion: testenv.CoreVersion}
	p, err := r.GetWarm(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := r.Get(k); again != p {
		t.Error("Get made a second pool for the same key")
	}
	if _, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil); err != nil {
		t.Fatal(err)
	}
	r.Drop(root, jit.Key{})
	if _, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil); !errors.Is(err, jit.ErrClosed) {
		t.Errorf("pool of a dropped key: err = %v", err)
	}
	if kids := workertest.Children(); len(kids) > 0 {
		t.Errorf("processes left after Drop: %v", kids)
	}
}
