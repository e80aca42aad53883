package nodeworker_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/incrtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
)

// Incremental compiles on the Node.js engine: the differential tests of
// engine/incremental_test.go, through a pool of two Node workers, as the
// daemon uses them. After every edit the incremental compile (on the
// worker holding the kept context) must equal, byte for byte, the full
// compile the daemon verifies it against (COMPILE_FULL_HOOKED, which the
// pool sends to the other worker).

// nodeIncr is an incrtest.Compiler over a pool of Node workers.
type nodeIncr struct {
	t           testing.TB
	p           *jit.Pool
	root        string
	incremental int
	full        map[string]int
	calls       int
}

func newNodeIncr(t testing.TB, root, version string) *nodeIncr {
	opts := jit.PoolOptions{Workers: 2}
	if version != "" {
		opts.CoreVersion = version
	}
	return &nodeIncr{t: t, p: nodeWorkers.NewPool(t, root, opts), root: root, full: map[string]int{}}
}

func (d *nodeIncr) Compile(paths []string) (full, incr []byte, fullErr, incrErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := compile.Request(d.root, paths, compile.Overrides{}, time.Minute)
	if err != nil {
		d.t.Fatal(err)
	}
	// Two compiles in three come with the host's signatures of the files
	// (jit.CompileJob.Paths), as dfd serve sends them; the third lets the
	// worker stat the files itself, so that a kept context's reads
	// recorded one way are compared the other way too.
	d.calls++
	var sigPaths []string
	if d.calls%3 != 0 {
		sigPaths = paths
	}
	f, fullErr := d.p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeFullHooked, Paths: sigPaths})
	i, incrErr := d.p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeIncremental, Paths: sigPaths})
	// An error of the worker itself (not of the project's code) would
	// make both sides fail alike and the comparison pass: none is expected.
	for _, err := range []error{fullErr, incrErr} {
		var we *jit.WorkerError
		if errors.As(err, &we) && we.Code != jit.CodeScript {
			d.t.Fatalf("the worker failed: %v", err)
		}
	}
	if f != nil {
		full = f.Response
	}
	if i != nil {
		incr = i.Response
		switch o := i.Incremental; {
		case o == nil:
			d.t.Fatal("the Node worker said nothing of how an incremental compile ran")
		case o.Rerun:
			d.incremental++
		default:
			d.full[incrtest.ReasonKind(o.Reason)]++
		}
	}
	return full, incr, fullErr, incrErr
}

func (d *nodeIncr) Counts() (int, map[string]int) { return d.incremental, d.full }

func nodeRunEdits(t *testing.T, root, version string, seed uint64, steps int) {
	t.Helper()
	needNode(t)
	p, err := incrtest.Load(root, seed)
	if err != nil {
		t.Fatal(err)
	}
	d := newNodeIncr(t, root, version)
	incrtest.Run(t, p, d, steps)
}

func TestNodeIncrementalFixtures(t *testing.T) {
	incrtest.EachFixture(t, func(t *testing.T, root string, seed uint64) {
		nodeRunEdits(t, root, "", seed, incrtest.Steps(40))
	})
}

func TestNodeIncrementalRealProjects(t *testing.T) {
	incrtest.EachRealProject(t, func(t *testing.T, root string, seed uint64) {
		nodeRunEdits(t, root, "", seed, incrtest.Steps(40))
	})
}

// Generated projects of 400 and 3,000 actions (bench/projectgen), with JiT
// actions; the 3,000 one only with DFD_INCR_STEPS set (minutes).
func TestNodeIncrementalGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("a 400-action project: long")
	}
	sizes := []int{400}
	if os.Getenv("DFD_INCR_STEPS") != "" {
		sizes = append(sizes, 3000)
	}
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			root, _, _ := incrtest.Generated(t, n, 7)
			nodeRunEdits(t, root, "", uint64(n), incrtest.Steps(40))
		})
	}
}

// The older 3.x cores: 3.0.59 has the hooks; 3.0.52 keeps session.tests
// in another shape, so its compiles stay full ones, with the reason.
func TestNodeIncrementalOlderCores(t *testing.T) {
	t.Run("3.0.59", func(t *testing.T) {
		root := testenv.ProjectCopy(t, testenv.Fixture("js_api"), "3.0.59")
		nodeRunEdits(t, root, "3.0.59", 5, incrtest.Steps(40))
	})
	t.Run("3.0.52", func(t *testing.T) {
		root := testenv.ProjectCopy(t, testenv.Fixture("js_api"), "3.0.52")
		p, err := incrtest.Load(root, 1)
		if err != nil {
			t.Fatal(err)
		}
		d := newNodeIncr(t, root, "3.0.52")
		req, err := compile.Request(root, p.Paths(), compile.Overrides{}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		plain, err := d.p.Compile(ctx, jit.CompileJob{Request: req})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			res, err := d.p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeIncremental})
			if err != nil {
				t.Fatal(err)
			}
			if o := res.Incremental; o == nil || o.Rerun || o.Kept || o.Reason == "" {
				t.Fatalf("core 3.0.52: %+v, want a full compile, not kept, with a reason", o)
			}
			if !bytes.Equal(res.Response, plain.Response) {
				t.Errorf("core 3.0.52: the hooked compile differs from the plain one:\n%s", incrtest.GraphDiff(plain.Response, res.Response))
			}
		}
	})
}

// worker.js's findVerifies finds what a search of the whole text with the
// same expression finds (up to two matches), on texts that put names, dots
// and repeats around its literal; TestPatchesSame covers the cores.
func TestFindVerifiesJS(t *testing.T) {
	node := needNode(t)
	s, err := nodeworker.WriteScript(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	js := `const w = require(process.argv[1]);
const m = "a.verifyObjectMatchesProto(b.dataform.CompiledGraph,c,d.VerifyProtoErrorBehaviour.SUGGEST_REPORTING_TO_DATAFORM_TEAM)";
const lit = ".verifyObjectMatchesProto(";
const whole = /[\w$]+\.verifyObjectMatchesProto\([\w$]+\.dataform\.CompiledGraph,[\w$]+,[\w$]+\.VerifyProtoErrorBehaviour\.SUGGEST_REPORTING_TO_DATAFORM_TEAM\)/g;
const texts = [m, "x".repeat(300) + m, "q." + m + ";", "$" + m, ";" + m.slice(1), m + ";" + m, m + m + m,
  m + "x" + m.slice(1), "f" + lit + ")", m.slice(0, -1), "g" + lit + m, "é" + m];
let bad = 0;
for (const t of texts) {
  const got = JSON.stringify(w.findVerifies(t).map((r) => [r.index, r.index + r[0].length]));
  const want = JSON.stringify([...t.matchAll(whole)].slice(0, 2).map((r) => [r.index, r.index + r[0].length]));
  if (got !== want) { bad++; console.log(JSON.stringify(t.slice(0, 40)), "got", got, "want", want); }
}
console.log(bad ? "FAIL" : "ok " + texts.length);`
	out, err := exec.Command(node, "-e", js, s).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "ok 12" {
		t.Errorf("worker.js's findVerifies differs from the whole-text search:\n%s", got)
	}
}

// The Node worker patches core's bundle itself (worker.js): the hooks of
// incremental compiles in main() and the faster target stringifier. Each
// patch must be the engine's, byte for byte, on every core dfd supports, so
// that both engines run the same code.
func TestPatchesSame(t *testing.T) {
	node := needNode(t)
	s, err := nodeworker.WriteScript(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	patches := map[string]func(string) (string, bool){
		"patchIncremental":       engine.PatchIncremental,
		"patchTargetStringifier": engine.PatchTargetStringifier,
	}
	for _, version := range []string{testenv.CoreVersion, "3.0.59", "3.0.52"} {
		root := testenv.ProjectCopy(t, testenv.Fixture("js_api"), version)
		bundle := filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
		src, err := os.ReadFile(bundle)
		if err != nil {
			t.Fatal(err)
		}
		for name, patch := range patches {
			t.Run(version+"/"+name, func(t *testing.T) {
				want, ok := patch(string(src))
				if !ok {
					t.Fatalf("core %s: engine's %s finds nothing to patch", version, name)
				}
				js := `const w = require(process.argv[1]); const fs = require("fs"); const c = require("crypto");
const p = w[process.argv[3]](fs.readFileSync(process.argv[2], "utf8"));
process.stdout.write(p.ok + " " + c.createHash("sha256").update(p.code).digest("hex"));`
				out, err := exec.Command(node, "-e", js, s, bundle, name).CombinedOutput()
				if err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				sum := sha256.Sum256([]byte(want))
				if got, w := strings.TrimSpace(string(out)), "true "+hex.EncodeToString(sum[:]); got != w {
					t.Errorf("core %s: worker.js's %s %q, engine's %q", version, name, got, w)
				}
			})
		}
	}
}

// BenchmarkNodeIncremental compares, on generated projects, a full compile
// on a Node worker with an incremental recompile after an edit of one .sqlx
// file (an unsaved buffer, as the editor sends it), on a pool of one
// worker as dfd serve has for Node.js compiles. worker-cpu-ms/op is the
// worker process's CPU time: on a shared machine wall time says little.
// (10,000 actions take a minute to set up: -bench 'NodeIncremental/(400|3000)/'
// leaves them out.)
func BenchmarkNodeIncremental(b *testing.B) {
	for _, n := range []int{400, 3000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchNodeIncremental(b, n) })
	}
}

func benchNodeIncremental(b *testing.B, n int) {
	root, paths, edit := incrtest.Generated(b, n, 1)
	orig, err := os.ReadFile(filepath.Join(root, edit))
	if err != nil {
		b.Fatal(err)
	}
	req, err := compile.Request(root, paths, compile.Overrides{}, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	sqlEdit := func(i int) map[string][]byte {
		return map[string][]byte{edit: fmt.Appendf(nil, "%s\n-- %d", orig, i)}
	}
	// bench/editor.sh's edit: an unknown config property, added and
	// removed; the action leaves the graph and comes back, so the targets
	// change on every edit.
	broken := bytes.Replace(orig, []byte("config {"), []byte("config {\n  descripton: \"bench\","), 1)
	if bytes.Equal(broken, orig) {
		b.Fatalf("%s has no config block", edit)
	}
	configEdit := func(i int) map[string][]byte {
		if i%2 == 1 {
			return map[string][]byte{edit: broken}
		}
		return map[string][]byte{edit: orig}
	}
	edited := sqlEdit
	run := func(b *testing.B, mode engine.Mode, check func(*jit.Result)) {
		pool := nodeWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1})
		ctx := context.Background()
		res, err := pool.Compile(ctx, jit.CompileJob{Request: req, Mode: mode})
		if err != nil {
			b.Fatal(err)
		}
		pid := res.Stats.PID
		cpu := workertest.CPUTime(pid)
		heap := res.Stats.PeakHeap
		i := 0
		for b.Loop() {
			i++
			res, err := pool.Compile(ctx, jit.CompileJob{Request: req, Mode: mode, Overlay: edited(i), Paths: paths})
			if err != nil {
				b.Fatal(err)
			}
			if res.Stats.PID != pid {
				b.Fatalf("another worker served the compile (heap %d MiB after the previous, %+v)", heap>>20, res.Incremental)
			}
			check(res)
			heap = res.Stats.PeakHeap
		}
		b.ReportMetric(float64((workertest.CPUTime(pid)-cpu).Milliseconds())/float64(b.N), "worker-cpu-ms/op")
		b.ReportMetric(float64(heap>>20), "heap-MiB")
	}
	b.Run("full", func(b *testing.B) {
		run(b, engine.ModeFull, func(*jit.Result) {})
	})
	rerun := func(res *jit.Result) {
		if o := res.Incremental; o == nil || !o.Rerun || o.File != edit {
			b.Fatalf("not a rerun of %s: %+v", edit, o)
		}
	}
	b.Run("incremental", func(b *testing.B) {
		edited = sqlEdit
		run(b, engine.ModeIncremental, rerun)
	})
	b.Run("incremental-config", func(b *testing.B) {
		edited = configEdit
		run(b, engine.ModeIncremental, rerun)
	})
}

// The scripted cases random edits rarely reach (incrtest.Scenarios).
func TestNodeIncrementalScenarios(t *testing.T) {
	needNode(t)
	for _, s := range incrtest.Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			incrtest.RunScenario(t, s, func(root string) incrtest.Compiler { return newNodeIncr(t, root, "") })
		})
	}
}

// A file written just before the kept compile has no stat signature then
// (it is "racily clean"), so a rerun compares it by content; once it is
// older, a rerun that finds it unchanged signs it and stops reading it.
// A later rewrite of it on disk, with the same size, must still be seen:
// the incremental result must equal the full compile after it.
func TestNodeIncrementalSignsRacyFiles(t *testing.T) {
	needNode(t)
	view := func(n int) string { return fmt.Sprintf("config { type: \"view\" }\nselect %d as v\n", n) }
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\n",
		"definitions/a.sqlx":     view(1),
		"definitions/b.sqlx":     view(1),
	})
	paths := []string{"definitions/a.sqlx", "definitions/b.sqlx", "workflow_settings.yaml"}
	d := newNodeIncr(t, root, "")
	incrtest.Check(t, d, paths, "first compile") // keeps a context; every file is racy
	// Older than the 2 s window of fileSignature now (a wait, not a timing
	// assertion: on a slow machine the files are only older still).
	time.Sleep(2100 * time.Millisecond)
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("definitions/b.sqlx", view(2)) // racy itself; a is read and signed
	incrtest.Check(t, d, paths, "b edited")
	write("definitions/a.sqlx", view(3)) // same size as before
	incrtest.Check(t, d, paths, "a rewritten after it was signed")
	write("definitions/b.sqlx", view(4))
	incrtest.Check(t, d, paths, "b edited again")
	if n, full := d.Counts(); n != 3 {
		t.Errorf("%d of 3 edits ran as reruns (full compiles: %v)", n, full)
	}
}

// incrtest.UnsafeCases on the Node.js worker: an edit of the file is a
// full compile whose reason says what it did (a plain file's is a rerun).
func TestNodeIncrementalUnsafeFiles(t *testing.T) {
	needNode(t)
	for _, c := range incrtest.UnsafeCases() {
		t.Run(c.Name, func(t *testing.T) {
			files := c.Files()
			root := testenv.WriteProject(t, testenv.CoreVersion, files)
			p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
			req, err := compile.Request(root, c.Paths(), compile.Overrides{}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeKeep}); err != nil {
				t.Fatal(err)
			}
			edit := map[string][]byte{incrtest.UnsafeFile: []byte(files[incrtest.UnsafeFile] + "// edited\n")}
			res, err := p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeIncremental, Overlay: edit})
			if err != nil {
				t.Fatal(err)
			}
			o := res.Incremental
			switch {
			case o == nil:
				t.Fatal("no outcome")
			case c.Why == "" && !o.Rerun:
				t.Errorf("the edit of a plain file was a full compile: %s", o.Reason)
			case c.Why != "" && (o.Rerun || !c.Matches(o.Reason)):
				t.Errorf("edit of %s: rerun %v, reason %q; want a full compile because it %s", incrtest.UnsafeFile, o.Rerun, o.Reason, c.Why)
			}
		})
	}
}

// A reused compile() result shares its nested values with the kept one,
// frozen: a core whose graph stage wrote into them (a future one, here
// core patched to rewrite each target's name in place) must not change
// the kept result unseen. The write throws, and the edit is compiled in
// full, its result the full compile's.
func TestNodeIncrementalFrozenResults(t *testing.T) {
	needNode(t)
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\n",
		"definitions/a.sqlx":     "config { type: \"view\" }\nselect 1 as v\n",
		"definitions/b.sqlx":     "config { type: \"view\" }\nselect v from ${ref(\"a\")}\n",
	})
	bundle := filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
	code, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	const at = "fullyQualifyDependencies(e){e.forEach((e=>{"
	if n := bytes.Count(code, []byte(at)); n != 1 {
		t.Fatalf("core %s has %d copies of %q, want 1", testenv.CoreVersion, n, at)
	}
	code = bytes.Replace(code, []byte(at), []byte(at+"e.target&&(e.target.name=e.target.name);"), 1)
	if err := os.WriteFile(bundle, code, 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{"definitions/a.sqlx", "definitions/b.sqlx", "workflow_settings.yaml"}
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	req, err := compile.Request(root, paths, compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeKeep}); err != nil {
		t.Fatal(err)
	}
	edit := map[string][]byte{"definitions/a.sqlx": []byte("config { type: \"view\" }\nselect 2 as v\n")}
	full, err := p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeFull, Overlay: edit})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeIncremental, Overlay: edit})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Incremental; o == nil || o.Rerun || !strings.Contains(o.Reason, "read only") {
		t.Errorf("outcome %+v; want a full compile because the write into a frozen target threw", o)
	}
	if !bytes.Equal(res.Response, full.Response) {
		t.Error("the result differs from the full compile's")
	}
}

// FuzzNodeIncremental is engine's FuzzIncremental on the Node.js worker:
// sequences of edits of the kinds users make, on the js_api fixture, the
// incremental result equal to the full compile after each. Its corpus
// (testdata/fuzz) runs with every go test; scripts/test.sh fuzzes it
// briefly.
func FuzzNodeIncremental(f *testing.F) {
	f.Add(uint64(1), []byte{0, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, seed uint64, ops []byte) {
		needNode(t)
		root := testenv.ProjectCopy(t, testenv.Fixture("js_api"), testenv.CoreVersion)
		p, err := incrtest.Load(root, seed)
		if err != nil {
			t.Fatal(err)
		}
		incrtest.RunOps(t, p, newNodeIncr(t, root, ""), ops)
	})
}
