package jit_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
)

// A pool of two goja workers: the first compile is kept by the worker that
// ran it; edits of one file (unsaved buffers) are recompiled there, even
// with a JiT-free verification (COMPILE_FULL_HOOKED) in between, which
// goes to the other worker; each result equals the in-process compile's.
func TestPoolIncrementalCompiles(t *testing.T) {
	root := workertest.Project(t, smallProject)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 2})
	ctx := context.Background()
	req, err := compile.Request(root, filePaths(smallProject), compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeIncremental})
	if err != nil {
		t.Fatal(err)
	}
	if o := first.Incremental; o == nil || o.Rerun || !o.Kept {
		t.Fatalf("first compile: %+v, want a kept full compile", o)
	}
	keeper := first.Stats.PID
	for i := range 4 {
		overlay := map[string][]byte{"definitions/totals.sqlx": fmt.Appendf(nil, "config { type: \"view\" }\nselect sum(amount) as total_%d from ${ref(\"orders\")}\n", i)}
		res, err := p.Compile(ctx, jit.CompileJob{Request: req, Overlay: overlay, Mode: engine.ModeIncremental})
		if err != nil {
			t.Fatal(err)
		}
		if o := res.Incremental; o == nil || !o.Rerun || o.File != "definitions/totals.sqlx" || res.Stats.PID != keeper {
			t.Fatalf("edit %d: %+v on worker %d (keeper %d), want a rerun of definitions/totals.sqlx there", i, o, res.Stats.PID, keeper)
		}
		want := compileInProcess(t, root, overlay, req)
		if !bytes.Equal(res.Response, want) {
			t.Fatalf("edit %d: the incremental result differs from the in-process full compile", i)
		}
		verify, err := p.Compile(ctx, jit.CompileJob{Request: req, Overlay: overlay, Mode: engine.ModeFullHooked})
		if err != nil {
			t.Fatal(err)
		}
		if verify.Stats.PID == keeper {
			t.Errorf("edit %d: the verification ran on the worker holding the kept context", i)
		}
		if !bytes.Equal(verify.Response, want) {
			t.Fatalf("edit %d: the verification differs from the in-process full compile", i)
		}
	}
	// An includes edit is a full compile, kept again.
	overlay := map[string][]byte{"includes/helpers.js": []byte("function double(c) { return `${c} * 3`; }\nmodule.exports = { double };\n")}
	res, err := p.Compile(ctx, jit.CompileJob{Request: req, Overlay: overlay, Mode: engine.ModeIncremental})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Incremental; o == nil || o.Rerun || !o.Kept || o.Reason == "" {
		t.Fatalf("includes edit: %+v, want a kept full compile with a reason", o)
	}
}

// A worker holding a kept context is not recycled for its heap (every
// request here crosses RecycleHeap): the next incremental compile reruns
// there. One that keeps nothing is recycled as before.
func TestPoolKeepsTheWorkerHoldingAContext(t *testing.T) {
	root := workertest.Project(t, smallProject)
	ctx := context.Background()
	req, err := compile.Request(root, filePaths(smallProject), compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("kept", func(t *testing.T) {
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, RecycleHeap: 1})
		first, err := p.Compile(ctx, jit.CompileJob{Request: req, Mode: engine.ModeIncremental})
		if err != nil {
			t.Fatal(err)
		}
		overlay := map[string][]byte{"definitions/totals.sqlx": []byte("config { type: \"view\" }\nselect sum(amount) as t from ${ref(\"orders\")}\n")}
		res, err := p.Compile(ctx, jit.CompileJob{Request: req, Overlay: overlay, Mode: engine.ModeIncremental})
		if err != nil {
			t.Fatal(err)
		}
		if o := res.Incremental; o == nil || !o.Rerun || res.Stats.PID != first.Stats.PID {
			t.Fatalf("after a request over RecycleHeap: %+v on worker %d, want a rerun on worker %d", o, res.Stats.PID, first.Stats.PID)
		}
	})
	t.Run("nothing kept", func(t *testing.T) {
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, RecycleHeap: 1})
		a, err := p.Compile(ctx, jit.CompileJob{Request: req})
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Compile(ctx, jit.CompileJob{Request: req})
		if err != nil {
			t.Fatal(err)
		}
		if a.Stats.PID == b.Stats.PID {
			t.Fatal("a worker keeping nothing served again after a request over RecycleHeap")
		}
	})
}
