package projectgen_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/project"
)

// The budget bookkeeping must be exact for every size, tiny ones included.
func TestPlanHitsActionCount(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 11, 12, 13, 30, 59, 119, 120, 181, 400, 1000, 3000} {
		for _, jit := range []bool{false, true} {
			for seed := int64(1); seed <= 3; seed++ {
				p, err := projectgen.Plan(projectgen.Options{Actions: n, JiT: jit, Seed: seed})
				if err != nil {
					t.Fatalf("n=%d jit=%v seed=%d: %v", n, jit, seed, err)
				}
				if got := p.Counts.Total(); got != n {
					t.Errorf("n=%d jit=%v seed=%d: %d actions", n, jit, seed, got)
				}
				if !jit && p.Counts.JiT != 0 {
					t.Errorf("n=%d: %d JiT actions without JiT", n, p.Counts.JiT)
				}
			}
		}
	}
	if _, err := projectgen.Plan(projectgen.Options{Actions: 0}); err == nil {
		t.Error("Actions: 0 was accepted")
	}
}

// BigSQLX is about the size asked for, never less, and the big file is
// counted as one table.
func TestBigSQLX(t *testing.T) {
	for _, size := range []int{1 << 10, 100 << 10, 2 << 20} {
		s := projectgen.BigSQLX(size, 1, "dim_calendar")
		if len(s) < size || len(s) > size+1024 {
			t.Errorf("BigSQLX(%d) is %d bytes", size, len(s))
		}
		if s != projectgen.BigSQLX(size, 1, "dim_calendar") {
			t.Errorf("BigSQLX(%d) is not deterministic", size)
		}
	}
	p, err := projectgen.Plan(projectgen.Options{Actions: 30, Seed: 1, BigSQLXBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Counts.Total(); got != 30 {
		t.Errorf("%d actions, want 30", got)
	}
	if len(p.Files[projectgen.BigSQLXPath]) < 64<<10 {
		t.Errorf("%s is %d bytes", projectgen.BigSQLXPath, len(p.Files[projectgen.BigSQLXPath]))
	}
	if _, err := projectgen.Plan(projectgen.Options{Actions: 12, BigSQLXBytes: 1}); err == nil {
		t.Error("BigSQLXBytes with 12 actions (no calendar table) was accepted")
	}
}

func TestPlanIsDeterministic(t *testing.T) {
	opts := projectgen.Options{Actions: 300, JiT: true, Seed: 42}
	a, err := projectgen.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := projectgen.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(a.Files, b.Files) {
		t.Error("the same options gave different projects")
	}
	opts.Seed++
	c, err := projectgen.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if maps.Equal(a.Files, c.Files) {
		t.Error("different seeds gave the same project")
	}
}

// The mix is what the package promises: every kind of action and feature.
func TestPlanHasRealisticMix(t *testing.T) {
	p, err := projectgen.Plan(projectgen.Options{Actions: 400, JiT: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Counts
	for name, n := range map[string]int{
		"declarations": c.Declarations, "tables": c.Tables, "views": c.Views, "incrementals": c.Incrementals,
		"operations": c.Operations, "assertions": c.Assertions, "built-in assertions": c.BuiltinAssertions, "JiT": c.JiT,
	} {
		if n == 0 {
			t.Errorf("no %s", name)
		}
	}
	var all strings.Builder
	for _, content := range p.Files {
		all.WriteString(content)
	}
	for _, want := range []string{
		"${when(incremental()", "updatePartitionFilter", "uniqueKey:", "nonNull:", "rowConditions:",
		"pre_operations {", "post_operations {", "js {", "tags: [", "declare({", "publish(", "assert(", "operate(",
		".jitCode(async (jctx)", "jctx.adapter.getTable", "jctx.adapter.listTables", "jctx.adapter.execute",
		"sql_helpers.", "constants.", "hasOutput: true", "\n---\n", "for (const",
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no file contains %q", want)
		}
	}
	// vm2 rewrites `catch (e)` in the CLI's printed jitCode; see domain.go.
	if strings.Contains(all.String(), "catch (") {
		t.Error("generated code has a catch clause with a binding")
	}
}

func TestGenerateRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := projectgen.Generate(dir, projectgen.Options{Actions: 10}); err == nil {
		t.Fatal("Generate wrote into a non-empty directory")
	}
}

// Generated projects compile without errors in dfd's engine, and the graph
// has exactly the actions the generator counted.
func TestGeneratedProjectCompiles(t *testing.T) {
	for _, opts := range []projectgen.Options{
		{Actions: 30, Seed: 3},
		{Actions: 160, JiT: true, Seed: 7},
		{Actions: 30, JiT: true, Seed: 1, BigSQLXBytes: 256 << 10},
	} {
		t.Run(fmt.Sprintf("%d-jit=%v-big=%d", opts.Actions, opts.JiT, opts.BigSQLXBytes), func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "p")
			want, err := projectgen.GenerateCounts(src, opts)
			if err != nil {
				t.Fatal(err)
			}
			dir := testenv.ProjectCopy(t, src, testenv.CoreVersion)
			p, err := project.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			core, err := (&project.CoreResolver{}).Resolve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := compile.Run(context.Background(), p, core, compile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors() {
				t.Errorf("%s: %s", e.GetFileName(), e.GetMessage())
			}
			g := res.Graph
			got := map[string]int{
				"tables": len(g.GetTables()), "operations": len(g.GetOperations()),
				"assertions": len(g.GetAssertions()), "declarations": len(g.GetDeclarations()),
			}
			exp := map[string]int{
				"tables": want.GraphTables(), "operations": want.Operations,
				"assertions": want.GraphAssertions(), "declarations": want.Declarations,
			}
			if !maps.Equal(got, exp) {
				t.Errorf("graph has %v, generator counted %v", got, exp)
			}
		})
	}
}
