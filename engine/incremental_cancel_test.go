package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// A newer edit while a rerun runs (typing) cancels it. Stopped halfway, a
// rerun would leave the kept context unusable and the next compile would
// be a full one; so a rerun that ends within its grace (what the last full
// compile took, at most a second) answers and keeps the context, and one
// that does not (code that never ends) is stopped and the context dropped.
func TestKeeperCanceledRerun(t *testing.T) {
	const busy = "console.log('rerunning'); { const t0 = Date.now(); while (Date.now() - t0 < 150) {} }\n"
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/a.sqlx":     "config { type: \"table\" }\nSELECT 1 AS a\n",
		"definitions/slow.js":    "// v0\npublish(\"slow\", { type: \"table\" }).query(\"SELECT 1 AS v\");\n",
	})
	b, err := engine.LoadBundle(filepath.Join(root, "node_modules/@dataform/core/bundle.js"), testenv.CoreVersion)
	if err != nil {
		t.Fatal(err)
	}
	// cancel is the current compile's; the project's code calls it from
	// console.log at the point the test wants the newer edit to come.
	var cancel context.CancelFunc
	log := func(level, msg string) {
		if strings.Contains(msg, "rerunning") || strings.Contains(msg, "spinning") {
			cancel()
		}
	}
	fresh := func() (*engine.Runtime, error) { return b.NewRuntime(engine.Options{Root: root, Log: log}) }
	req := incrRequest(t, root, []string{"definitions/a.sqlx", "definitions/slow.js", "workflow_settings.yaml"})
	var k engine.Keeper
	compile := func(slow string) ([]byte, engine.Outcome, error) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "definitions/slow.js"), []byte(slow), 0o644); err != nil {
			t.Fatal(err)
		}
		files, err := engine.OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		defer files.Close()
		var ctx context.Context
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return k.Compile(ctx, fresh, files, req, engine.ModeIncremental)
	}

	// The full compile that keeps a context (its own run of the busy
	// loop is not canceled: the file logs only from the second version).
	if _, out, err := compile("// v1\n{ const t0 = Date.now(); while (Date.now() - t0 < 150) {} }\npublish(\"slow\", { type: \"table\" }).query(\"SELECT 1 AS v\");\n"); err != nil || out.Rerun || !out.Kept {
		t.Fatalf("first compile: %+v, %v", out, err)
	}
	// Canceled as the rerun starts: it finishes, answers, keeps the context.
	resp, out, err := compile("// v2\n" + busy + "publish(\"slow\", { type: \"table\" }).query(\"SELECT 2 AS v\");\n")
	if err != nil || !out.Rerun || !out.Kept || len(resp) == 0 {
		t.Fatalf("canceled rerun: %+v, %v; want it answered and the context kept", out, err)
	}
	if _, out, err := compile("// v3\npublish(\"slow\", { type: \"table\" }).query(\"SELECT 3 AS v\");\n"); err != nil || !out.Rerun {
		t.Fatalf("after the canceled rerun: %+v, %v; want a rerun", out, err)
	}
	// Code that never ends: stopped after the grace, the context dropped.
	_, out, err = compile("// v4\nconsole.log('spinning'); while (true) {}\n")
	if !errors.Is(err, engine.ErrCanceled) && !errors.Is(err, context.Canceled) {
		t.Fatalf("runaway rerun: %+v, %v; want it canceled", out, err)
	}
	if _, out, err := compile("// v5\npublish(\"slow\", { type: \"table\" }).query(\"SELECT 5 AS v\");\n"); err != nil || out.Rerun || out.Reason != "no kept context" {
		t.Fatalf("after the runaway rerun: %+v, %v; want a full compile, no kept context", out, err)
	}
}
