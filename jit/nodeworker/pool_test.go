package nodeworker_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	dfproject "github.com/dfdtools/dfd/project"
)

func TestJit(t *testing.T) {
	root := workertest.Project(t, nil)
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	cases := []struct {
		name, code, query string
		err               string
		calls             int64
	}{
		{name: "no calls", code: workertest.JitNoCalls, query: "select 1 from `proj.ds.t`"},
		{name: "three calls", code: workertest.JitThreeCalls, query: "select id, amount -- 2", calls: 3},
		{name: "parallel calls", code: workertest.JitParallel, query: "select 3", calls: 3},
		{name: "caught adapter error", code: workertest.JitCaught, query: `select "NOT_FOUND: table missing not found"`, calls: 1},
		{name: "uncaught adapter error", code: workertest.JitUncaught, err: "Error: NOT_FOUND: table gone not found", calls: 1},
		{name: "console", code: workertest.JitConsole, query: "select 5"},
		{name: "CLI-compiled jitCode", code: workertest.JitCLICompiled, query: "select 2", calls: 1},
		{name: "sync throw", code: "async (jctx) => { return 'x' +; }", err: "SyntaxError"},
		{name: "throws a string", code: "async () => { throw 'no partition'; }", err: "Uncaught no partition"},
		{name: "never settles", code: "async () => { await new Promise(() => {}); }", err: "waiting for something that never happens"},
		{name: "timers", code: "async () => { await new Promise(r => setTimeout(r, 1000)); let n = 0; const i = setInterval(() => n++, 10); await new Promise(r => setTimeout(r, 55)); clearInterval(i); return 'select ' + n; }", query: "select 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &workertest.Adapter{}
			var logs []string
			var mu sync.Mutex
			job := workertest.JitJob(c.code)
			job.Log = func(level, msg string) {
				mu.Lock()
				logs = append(logs, level+": "+msg)
				mu.Unlock()
			}
			res, err := p.Jit(context.Background(), job, a.RPC)
			if c.err != "" {
				var we *jit.WorkerError
				if !errors.As(err, &we) || we.Code != jit.CodeScript || !strings.Contains(we.Message, c.err) {
					t.Fatalf("err = %v, want a script error with %q", err, c.err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if q := workertest.Query(t, res); q != c.query {
					t.Errorf("query %q, want %q", q, c.query)
				}
			}
			if a.Calls.Load() != c.calls {
				t.Errorf("%d adapter calls, want %d", a.Calls.Load(), c.calls)
			}
			if c.name == "console" {
				if strings.Join(logs, "\n") != "log: hello from jit\nwarn: {\"a\":1}" {
					t.Errorf("logs %q", logs)
				}
			}
		})
	}
}

func TestCompileSmoke(t *testing.T) {
	root := workertest.Project(t, map[string]string{
		"definitions/a.sqlx": "config { type: \"table\" }\nselect 1 as x",
		"definitions/b.sqlx": "config { type: \"view\" }\nselect * from ${ref(\"a\")}",
		"includes/c.js":      "module.exports = { n: require('path').join('a', 'b') };",
		"definitions/d.js":   "publish('d').query(ctx => 'select \"' + c.n + '\"');",
	})
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	pr, err := dfproject.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := pr.FilePaths()
	if err != nil {
		t.Fatal(err)
	}
	req, err := compile.Request(root, paths, compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Compile(context.Background(), jit.CompileJob{Request: req})
	if err != nil {
		t.Fatal(err)
	}
	// The first compile with ModeIncremental is a full one, with the same
	// bytes, whose context the worker keeps (incremental_test.go tests the
	// reruns).
	inc, err := p.Compile(context.Background(), jit.CompileJob{Request: req, Mode: engine.ModeIncremental})
	if err != nil {
		t.Fatal(err)
	}
	if o := inc.Incremental; o == nil || o.Rerun || !o.Kept || !bytes.Equal(inc.Response, res.Response) {
		t.Errorf("a first compile with ModeIncremental on Node.js: outcome %+v, same bytes %v", o, bytes.Equal(inc.Response, res.Response))
	}
	r, err := compile.Decode(res.Response)
	if err != nil {
		t.Fatal(err)
	}
	if errs := r.Errors(); len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if n := len(r.Graph.GetTables()); n != 3 {
		t.Errorf("%d tables: %v", n, r.Graph)
	}
	t.Logf("stats %+v", res.Stats)
}

// TestLargeFrames: a request of several MiB (an overlay) and its large
// response cross the pipes in many chunks.
func TestLargeFrames(t *testing.T) {
	root := workertest.Project(t, nil)
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	big := "config { type: \"view\" }\nselect '" + strings.Repeat("x", 6<<20) + "' as padding"
	req, err := compile.Request(root, []string{"definitions/big.sqlx", "workflow_settings.yaml"}, compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Compile(context.Background(), jit.CompileJob{Request: req, Overlay: map[string][]byte{"definitions/big.sqlx": []byte(big)}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := compile.Decode(res.Response)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors()) > 0 || len(r.Graph.GetTables()) != 1 || len(r.Graph.GetTables()[0].GetQuery()) < 6<<20 {
		t.Fatalf("errors %v, %d tables", r.Errors(), len(r.Graph.GetTables()))
	}
	t.Logf("%d-byte response in %s", len(res.Response), res.Stats.Run)
}
