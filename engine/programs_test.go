package engine

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

func TestProgramCache(t *testing.T) {
	c := &programCache{max: 1 << 10}
	a, err := c.compile("/p/a.js", wrapModule("exports.x = 1;"))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.compile("/p/a.js", wrapModule("exports.x = 1;")); again != a {
		t.Error("the same module compiled twice")
	}
	if other, _ := c.compile("/p/a.js", wrapModule("exports.x = 2;")); other == a {
		t.Error("other code got the cached program")
	}
	if other, _ := c.compile("/p/b.js", wrapModule("exports.x = 1;")); other == a {
		t.Error("another file got the cached program (its name is in stack traces)")
	}
	if _, err := c.compile("/p/bad.js", wrapModule("exports.x = ;")); err == nil {
		t.Error("a syntax error compiled")
	}
	// Over the bound, the cache starts again.
	big := wrapModule("exports.s = '" + string(make([]byte, 2000)) + "';")
	if _, err := c.compile("/p/big.js", big); err != nil {
		t.Fatal(err)
	}
	if _, kept := c.m[programKey("/p/a.js", wrapModule("exports.x = 1;"))]; kept {
		t.Error("the cache kept its entries past its bound")
	}

	// Callers asking at once share one compile.
	var wg sync.WaitGroup
	progs := make([]any, 8)
	for i := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := c.compile("/p/c.js", wrapModule("exports.c = 3;"))
			progs[i] = p
		}()
	}
	wg.Wait()
	for _, p := range progs {
		if p != progs[0] {
			t.Fatal("concurrent callers got different programs")
		}
	}
}

// After Precompile, a compile of the project finds every module compiled
// (its .js files, and its .sqlx files whose transpile is cached): it adds
// no program of its own, and gives the graph it gives without Precompile.
func TestPrecompileCoversTheCompile(t *testing.T) {
	files := map[string]string{
		"workflow_settings.yaml": "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\n",
		"includes/consts.js":     "module.exports = { n: 2 };\n",
		"definitions/a.sqlx":     "config { type: \"view\" }\nselect ${consts.n} as n\n",
		"definitions/b.js":       "publish(\"b\").query(ctx => `select * from ${ctx.ref(\"a\")}`);\n",
		"definitions/sub/c.sqlx": "config { type: \"table\" }\nselect * from ${ref(\"b\")}\n",
	}
	root := testenv.WriteProject(t, testenv.CoreVersion, files)
	var rels []string
	for rel := range files {
		rels = append(rels, rel)
	}
	bundle, err := LoadBundle(filepath.Join(root, "node_modules/@dataform/core/bundle.js"), testenv.CoreVersion)
	if err != nil {
		t.Fatal(err)
	}
	compileOnce := func() []byte { return compileRaw(t, bundle, root, rels) }
	want := compileOnce() // fills the transpile cache, as an earlier run of dfd does

	saved := modulePrograms
	t.Cleanup(func() { modulePrograms = saved })
	modulePrograms = &programCache{max: maxProgramSourceBytes}
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	Precompile(context.Background(), d, root, bundle.digest, rels)
	pre := len(modulePrograms.m)
	if pre != 5 {
		t.Errorf("Precompile compiled %d modules, want the 5 .js, .sqlx and .yaml files", pre)
	}
	got := compileOnce()
	if n := len(modulePrograms.m); n != pre {
		t.Errorf("the compile compiled %d modules Precompile had not", n-pre)
	}
	if string(got) != string(want) {
		t.Error("the compile's answer differs after Precompile")
	}
}
