package engine_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/incrtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// incrRequest is the compile request of root over paths.
func incrRequest(t testing.TB, root string, paths []string) []byte {
	t.Helper()
	req, err := proto.Marshal(&dataformpb.CoreExecutionRequest{Request: &dataformpb.CoreExecutionRequest_Compile{
		Compile: &dataformpb.CompileExecutionRequest{CompileConfig: &dataformpb.CompileConfig{ProjectDir: root, FilePaths: paths}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// incrDriver compiles a project both ways after every edit.
type incrDriver struct {
	t      testing.TB
	bundle *engine.Bundle
	root   string
	kept   *engine.Kept
	// counts of the incremental side: re-runs of one file, and full compiles
	// (by reason).
	incremental int
	full        map[string]int
	log         func(level, msg string)
}

func newIncrDriver(t testing.TB, root string) *incrDriver {
	return newIncrDriverCore(t, root, testenv.CoreVersion)
}

func newIncrDriverCore(t testing.TB, root, version string) *incrDriver {
	b, err := engine.LoadBundle(filepath.Join(root, "node_modules/@dataform/core/bundle.js"), version)
	if err != nil {
		t.Fatal(err)
	}
	return &incrDriver{t: t, bundle: b, root: root, full: map[string]int{}}
}

func (d *incrDriver) runtime() *engine.Runtime {
	rt, err := d.bundle.NewRuntime(engine.Options{Root: d.root, Log: d.log})
	if err != nil {
		d.t.Fatal(err)
	}
	return rt
}

// Compile implements incrtest.Compiler: the full compile's response and
// the incremental side's (which falls back to a full compile that it
// keeps, as a worker does).
func (d *incrDriver) Compile(paths []string) (full, incr []byte, fullErr, incrErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	files, err := engine.OpenDir(d.root)
	if err != nil {
		d.t.Fatal(err)
	}
	defer files.Close()
	req := incrRequest(d.t, d.root, paths)
	// The full compile is one with the hooks of incremental compiles, as
	// the host's verification runs it: the hooks' frames show in the
	// stacks of errors thrown through them.
	full, _, _, fullErr = d.runtime().CompileKeep(ctx, files, req)
	if d.kept != nil {
		incr, _, incrErr = d.kept.Recompile(ctx, files, req)
		if incrErr == nil {
			d.incremental++
			return full, incr, fullErr, nil
		}
		if !errors.Is(incrErr, engine.ErrNotIncremental) {
			d.t.Logf("incremental compile failed (a full one follows): %v", incrErr)
		}
		d.full[incrtest.ReasonKind(incrErr.Error())]++
		d.kept = nil
	} else {
		d.full["no context"]++
	}
	var why string
	incr, d.kept, why, incrErr = d.runtime().CompileKeep(ctx, files, req)
	if d.kept == nil && incrErr == nil {
		d.full["not kept: "+why]++
	}
	return full, incr, fullErr, incrErr
}

// runEdits makes steps random edits of the project at root and checks
// after each that the incremental result is the full compile's, byte for
// byte. It returns the driver for its counts.
func runEdits(t *testing.T, root string, seed uint64, steps int) *incrDriver {
	t.Helper()
	return runEditsCore(t, root, testenv.CoreVersion, seed, steps)
}

func runEditsCore(t *testing.T, root, version string, seed uint64, steps int) *incrDriver {
	t.Helper()
	p, err := incrtest.Load(root, seed)
	if err != nil {
		t.Fatal(err)
	}
	d := newIncrDriverCore(t, root, version)
	incrtest.Run(t, p, d, steps)
	return d
}

// Counts implements incrtest.Compiler.
func (d *incrDriver) Counts() (int, map[string]int) { return d.incremental, d.full }

func TestIncrementalFixtures(t *testing.T) {
	incrtest.EachFixture(t, func(t *testing.T, root string, seed uint64) {
		runEdits(t, root, seed, incrtest.Steps(40))
	})
}

// The real projects of testdata/realprojects (see incrtest.Steps).
func TestIncrementalRealProjects(t *testing.T) {
	incrtest.EachRealProject(t, func(t *testing.T, root string, seed uint64) {
		runEdits(t, root, seed, incrtest.Steps(40))
	})
}

// A generated project of 400 actions (bench/projectgen), with JiT actions.
func TestIncrementalGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("a 400-action project: long")
	}
	root, _, _ := incrtest.Generated(t, 400, 7)
	runEdits(t, root, 400, incrtest.Steps(20))
}

// FuzzIncremental: a sequence of edits (each byte picks a kind) of the
// js_api fixture; after each, the incremental result must equal the full
// compile's. Its corpus is testdata/fuzz/FuzzIncremental.
func FuzzIncremental(f *testing.F) {
	f.Add(uint64(1), []byte{0, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, seed uint64, ops []byte) {
		root := testenv.ProjectCopy(t, testenv.Fixture("js_api"), testenv.CoreVersion)
		p, err := incrtest.Load(root, seed)
		if err != nil {
			t.Fatal(err)
		}
		incrtest.RunOps(t, p, newIncrDriver(t, root), ops)
	})
}

// The older 3.x cores we support: the hooks work on 3.0.59; 3.0.52 keeps
// session.tests in another shape, and its compiles stay full ones.
func TestIncrementalOlderCores(t *testing.T) {
	t.Run("3.0.59", func(t *testing.T) {
		root := testenv.ProjectCopy(t, testenv.Fixture("js_api"), "3.0.59")
		runEditsCore(t, root, "3.0.59", 5, 40)
	})
	t.Run("3.0.52", func(t *testing.T) {
		root := testenv.ProjectCopy(t, testenv.Fixture("js_api"), "3.0.52")
		p, err := incrtest.Load(root, 1)
		if err != nil {
			t.Fatal(err)
		}
		files, err := engine.OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		defer files.Close()
		d := newIncrDriverCore(t, root, "3.0.52")
		req := incrRequest(t, root, p.Paths())
		full, err := d.runtime().Compile(context.Background(), files, req)
		if err != nil {
			t.Fatal(err)
		}
		got, kept, why, err := d.runtime().CompileKeep(context.Background(), files, req)
		if err != nil || kept != nil || why == "" {
			t.Fatalf("core 3.0.52: kept %v, why %q, err %v; want a full compile and a reason", kept != nil, why, err)
		}
		if !bytes.Equal(got, full) {
			t.Errorf("core 3.0.52: the hooked compile differs from the plain one:\n%s", incrtest.GraphDiff(full, got))
		}
	})
}

// The scripted cases random edits rarely reach (incrtest.Scenarios).
func TestIncrementalScenarios(t *testing.T) {
	for _, s := range incrtest.Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			incrtest.RunScenario(t, s, func(root string) incrtest.Compiler { return newIncrDriver(t, root) })
		})
	}
}

// What a definitions file does outside its own actions marks it unsafe:
// an edit of it then needs a full compile (Kept.Unsafe says why).
func TestIncrementalUnsafeFiles(t *testing.T) {
	for _, c := range incrtest.UnsafeCases() {
		t.Run(c.Name, func(t *testing.T) {
			root := testenv.WriteProject(t, testenv.CoreVersion, c.Files())
			files, err := engine.OpenDir(root)
			if err != nil {
				t.Fatal(err)
			}
			defer files.Close()
			d := newIncrDriver(t, root)
			_, kept, why, err := d.runtime().CompileKeep(context.Background(), files, incrRequest(t, root, c.Paths()))
			if err != nil || kept == nil {
				t.Fatalf("not kept (%s): %v", why, err)
			}
			if got := kept.Unsafe(incrtest.UnsafeFile); !c.Matches(got) {
				t.Errorf("%s unsafe: %q, want %q", incrtest.UnsafeFile, got, c.Why)
			}
			if got := kept.Unsafe("definitions/c.sqlx"); got != "" {
				t.Errorf("c.sqlx unsafe: %q", got)
			}
		})
	}
}
