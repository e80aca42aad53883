package nodeworker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/internal/testenv"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

func TestMain(m *testing.M) {
	code := m.Run()
	os.RemoveAll(scriptDir)
	if code == 0 {
		if kids := children(); len(kids) > 0 {
			fmt.Fprintf(os.Stderr, "leaked child processes after all tests: %v\n", kids)
			code = 1
		}
	}
	os.Exit(code)
}

// needNode skips the test when no Node.js ≥ 20 is installed.
func needNode(t testing.TB) string {
	t.Helper()
	node, _, err := nodeworker.FindNode()
	if err != nil {
		t.Skipf("the node engine needs Node.js %d or newer: %v", nodeworker.MinNodeMajor, err)
	}
	return node
}

var scriptDir = func() string {
	d, err := os.MkdirTemp("", "dfd-nodeworker-test")
	if err != nil {
		panic(err)
	}
	return d
}()

// command is the node worker's command for root.
func command(t testing.TB, root, bundle string) []string {
	t.Helper()
	node := needNode(t)
	s, err := nodeworker.WriteScript(scriptDir)
	if err != nil {
		t.Fatal(err)
	}
	return nodeworker.CommandFor(node, s, root, bundle)
}

const settings = "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\ndefaultAssertionDataset: checks\n"

// project writes a scratch project with core and returns its root.
func project(t testing.TB, files map[string]string) string {
	t.Helper()
	all := map[string]string{"workflow_settings.yaml": settings}
	for k, v := range files {
		all[k] = v
	}
	return testenv.WriteProject(t, testenv.CoreVersion, all)
}

func bundlePath(root string) string {
	return filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
}

// newPool starts a pool of node workers for root with core version core
// ("" for testenv.CoreVersion); it is closed, and no worker may be left
// running, when the test ends.
func newPool(t testing.TB, root, core string, opts jit.PoolOptions) *jit.Pool {
	t.Helper()
	if core == "" {
		core = testenv.CoreVersion
	}
	if opts.BundlePath == "" {
		opts.BundlePath = bundlePath(root)
	}
	opts.Root, opts.CoreVersion = root, core
	if opts.Command == nil {
		opts.Command = command(t, root, opts.BundlePath)
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	p, err := jit.NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		start := time.Now()
		p.Close()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Close took %s", d)
		}
		if kids := children(); len(kids) > 0 {
			t.Errorf("processes left after Close: %v", kids)
		}
	})
	return p
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// children lists the pids of this process's child processes.
func children() []int {
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[0] != "Z" {
			if pp, _ := strconv.Atoi(f[1]); pp == me {
				out = append(out, pid)
			}
		}
	}
	return out
}

// --- JiT helpers (as jit's tests) ----------------------------------------------

const table = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE

func jitJob(code string) jit.JitJob {
	b, _ := proto.Marshal(&dataformpb.JitCompilationRequest{
		Target:                &dataformpb.Target{Database: "proj", Schema: "ds", Name: "t"},
		JitCode:               code,
		CompilationTargetType: table,
	})
	return jit.JitJob{Request: b}
}

// adapter answers GetTable for "known" and ListTables; GetTable of anything
// else fails with NOT_FOUND.
type adapter struct {
	calls atomic.Int64
	delay time.Duration
}

func (a *adapter) rpc(ctx context.Context, method string, req []byte) ([]byte, error) {
	a.calls.Add(1)
	if a.delay > 0 {
		select {
		case <-time.After(a.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	switch method {
	case "GetTable":
		var r dataformpb.GetTableRequest
		if err := proto.Unmarshal(req, &r); err != nil {
			return nil, err
		}
		if r.GetTarget().GetName() != "known" {
			return nil, errors.New("NOT_FOUND: table " + r.GetTarget().GetName() + " not found")
		}
		return proto.Marshal(&dataformpb.TableMetadata{Target: r.GetTarget(), Fields: []*dataformpb.Field{{Name: "id"}, {Name: "amount"}}})
	case "ListTables":
		return proto.Marshal(&dataformpb.ListTablesResponse{Tables: []*dataformpb.TableMetadata{
			{Target: &dataformpb.Target{Name: "a"}}, {Target: &dataformpb.Target{Name: "b"}},
		}})
	case "DeleteTable":
		return nil, nil
	}
	return nil, errors.New("UNIMPLEMENTED: " + method)
}

func query(t testing.TB, res *jit.Result) string {
	t.Helper()
	var r dataformpb.JitCompilationResponse
	if err := proto.Unmarshal(res.Response, &r); err != nil {
		t.Fatal(err)
	}
	return r.GetTable().GetQuery()
}

const (
	jitNoCalls            = "async (jctx) => `select 1 from ${jctx.self()}`"
	jitThreeCalls         = "async (jctx) => { const k = {target: {database: 'proj', schema: 'ds', name: 'known'}}; const t = await jctx.adapter.getTable(k); const l = await jctx.adapter.listTables({database: 'proj', schema: 'ds'}); await jctx.adapter.deleteTable(k); return `select ${t.fields.map(f => f.name).join(', ')} -- ${l.tables.length}`; }"
	jitParallel           = "async (jctx) => { const k = {target: {database: 'proj', schema: 'ds', name: 'known'}}; const ts = await Promise.all([1, 2, 3].map(() => jctx.adapter.getTable(k))); return `select ${ts.length}`; }"
	jitCaught             = "async (jctx) => { try { await jctx.adapter.getTable({target: {name: 'missing'}}); return 'found'; } catch (e) { return 'select ' + JSON.stringify(e.message); } }"
	jitUncaught           = "async (jctx) => (await jctx.adapter.getTable({target: {name: 'gone'}})).fields"
	jitConsole            = "async (jctx) => { console.log('hello from', 'jit'); console.warn({a: 1}); return 'select 5'; }"
	jitCatastrophicRegexp = "async (jctx) => { /^(?=a)(a|aa)+$/.test('a'.repeat(60) + 'b'); return 'x'; }"
	jitCLICompiled        = "async (jctx) => { try { await jctx.adapter.getTable({target: {name: 'missing'}}); } catch (e) {\n e=VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL.handleException(e);return 'select 2'; } }"
)

// expectOK runs a small JiT request that must succeed: the pool recovered.
func expectOK(t *testing.T, p *jit.Pool) {
	t.Helper()
	res, err := p.Jit(context.Background(), jitJob(jitThreeCalls), (&adapter{}).rpc)
	if err != nil {
		t.Fatalf("the request after the fault failed: %v", err)
	}
	if q := query(t, res); q != "select id, amount -- 2" {
		t.Fatalf("query after the fault %q", q)
	}
}
