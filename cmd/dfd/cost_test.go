package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// costProject: a table, an incremental table, a view, an assertion and a
// JiT table over a warehouse table, and a table over a project table not
// built yet.
func costProject(t *testing.T) string {
	return testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/src.sqlx":   "config { type: \"declaration\", schema: \"raw\", name: \"src\" }\n",
		"definitions/a.sqlx":     "config { type: \"table\" }\nSELECT id, name FROM ${ref(\"src\")}\n",
		"definitions/inc.sqlx":   "config { type: \"incremental\" }\nSELECT id FROM ${ref(\"src\")} ${when(incremental(), \"WHERE id > 10\")}\n",
		"definitions/v.sqlx":     "config { type: \"view\" }\nSELECT name AS n FROM ${ref(\"src\")}\n",
		"definitions/b.sqlx":     "config { type: \"table\" }\nSELECT id FROM ${ref(\"a\")}\n",
		"definitions/chk.sqlx":   "config { type: \"assertion\" }\nSELECT id FROM ${ref(\"src\")} WHERE id IS NULL\n",
		"definitions/j.js":       "publish(\"j\", { type: \"table\", dependencies: [\"src\"] }).jitCode(async (jctx) => `SELECT id AS jit_id FROM ${jctx.ref(\"src\")}`);\n",
	})
}

// costStandIn answers each statement's dry run with a figure of its own,
// and the reads of p.d.a (not built) with BigQuery's "Not found".
func costStandIn(t *testing.T) *bqrecorder.Server {
	return bqrecorder.Start(t, bqrecorder.Options{
		Bytes: costBytes,
		DryRunError: func(stmt string) *bqrecorder.Fault {
			if strings.Contains(stmt, "`p.d.a`") {
				return bqrecorder.TableNotFound("p.d.a")
			}
			return nil
		},
	})
}

// costBytes is costStandIn's figure for a statement of costProject.
func costBytes(stmt string) int64 {
	switch {
	case strings.Contains(stmt, "jit_id"):
		return 7 << 20 // the SQL the JiT action's code produced
	case strings.Contains(stmt, "WHERE id > 10"):
		return 100 << 20
	case strings.Contains(stmt, "IS NULL"):
		return 512 << 20
	case strings.Contains(stmt, "name AS n"):
		return 1 << 30
	case strings.Contains(stmt, "id, name"):
		return 3 << 30
	}
	return 2 << 30 // the incremental table's full refresh
}

// dfd check --cost --json: each action's figure is the stand-in's
// totalBytesProcessed, the incremental table has both runs, the view is
// left out of the totals (creating it bills nothing), the table over an
// unbuilt project table says so, and the totals add up. Only dry runs
// reach BigQuery, one per distinct statement.
func TestCheckCostJSON(t *testing.T) {
	dir := costProject(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec := costStandIn(t)
	res := runDFD(t, "check", dir, "--endpoint", rec.URL, "--cost", "--json")
	var out struct {
		Findings []checkFinding `json:"findings"`
		Cost     costReport     `json:"cost"`
	}
	if err := json.Unmarshal(res.stdout, &out); err != nil {
		t.Fatalf("exit %d, stdout (%v):\n%s\nstderr:\n%s", res.code, err, res.stdout, res.stderr)
	}
	c := out.Cost
	if !c.Available || c.Billing != "on-demand" || c.PricePerTiB != 6.25 {
		t.Fatalf("cost: %+v", c)
	}
	byTarget := map[string]actionCost{}
	for _, a := range c.Actions {
		byTarget[a.Target] = a
	}
	usd := func(b int64) float64 { return float64(b) / (1 << 40) * 6.25 }
	for _, w := range []struct {
		target, typ, status string
		bytes               int64
		inTotal             bool
	}{
		{"p.d.a", "table", "estimated", 3 << 30, true},
		{"p.d.inc", "incremental", "estimated", 2 << 30, true},
		{"p.d.v", "view", "estimated", 1 << 30, false},
		{"p.d.chk", "assertion", "estimated", 512 << 20, true},
		{"p.d.b", "table", "upstreamNotBuilt", 0, false},
		{"p.d.j", "table", "estimated", 7 << 20, true},
	} {
		a, ok := byTarget[w.target]
		if !ok {
			t.Errorf("%s: missing from %+v", w.target, c.Actions)
			continue
		}
		if a.Type != w.typ || a.Status != w.status || a.TotalBytesProcessed != w.bytes || a.InTotal != w.inTotal {
			t.Errorf("%s: %+v, want type %s, %s, %d bytes, inTotal %v", w.target, a, w.typ, w.status, w.bytes, w.inTotal)
		}
		if w.status == "estimated" && (a.CostUSD == nil || math.Abs(*a.CostUSD-usd(w.bytes)) > 1e-12) {
			t.Errorf("%s: costUSD %v, want %v", w.target, a.CostUSD, usd(w.bytes))
		}
	}
	if b := byTarget["p.d.b"]; !strings.Contains(b.Reason, "upstream not built (p.d.a)") {
		t.Errorf("p.d.b: reason %q", b.Reason)
	}
	if inc := byTarget["p.d.inc"].Incremental; inc == nil || inc.Status != "estimated" || inc.TotalBytesProcessed != 100<<20 {
		t.Errorf("p.d.inc incremental run: %+v", inc)
	}
	full := int64(3<<30 + 2<<30 + 512<<20 + 7<<20)
	incr := int64(3<<30 + 100<<20 + 512<<20 + 7<<20)
	tot := c.Totals
	if tot == nil || tot.TotalBytesProcessed != full || tot.IncrementalTotalBytesProcessed != incr || tot.WithoutFigure != 1 ||
		tot.CostUSD == nil || math.Abs(*tot.CostUSD-usd(full)) > 1e-12 {
		t.Errorf("totals %+v, want %d full, %d incremental, 1 without figure", tot, full, incr)
	}
	distinct := map[string]bool{}
	for _, j := range rec.Jobs() {
		if !j.DryRun {
			t.Errorf("a job that is not a dry run reached BigQuery: %q", j.Statement)
		}
		if distinct[j.Statement] {
			t.Errorf("dry-run twice: %q", j.Statement)
		}
		distinct[j.Statement] = true
	}
	if len(distinct) != 7 {
		t.Errorf("%d distinct statements dry-run, want 7 (a, inc ×2, v, b, chk, j)", len(distinct))
	}
}

// The text table; capacity billing shows bytes only; without BigQuery
// (--offline) cost is not available, and no figure is made up.
func TestCheckCostText(t *testing.T) {
	dir := costProject(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec := costStandIn(t)

	res := runDFD(t, "check", dir, "--endpoint", rec.URL, "--cost")
	out := string(res.stdout)
	for _, w := range []string{
		"cost of one run (BigQuery dry runs; on-demand at $6.25 per TiB):",
		"p.d.a", "3.0 GiB $0.02",
		"2.0 GiB $0.01 full refresh / 100 MiB <$0.01 incremental",
		"upstream not built (p.d.a)",
		"total: 5.5 GiB $0.03 with full refreshes, 3.6 GiB $0.02 with incremental runs; 1 action(s) without a figure are not in it",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), w) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", w, out, res.stderr)
		}
	}

	res = runDFD(t, "check", dir, "--endpoint", rec.URL, "--cost", "--billing", "capacity")
	if out := string(res.stdout); !strings.Contains(out, "capacity billing: bytes only") || strings.Contains(out, "$") {
		t.Errorf("capacity billing:\n%s", out)
	}

	rec.Reset()
	res = runDFD(t, "check", dir, "--offline", "--cost", "--json")
	var js struct{ Cost costReport }
	if err := json.Unmarshal(res.stdout, &js); err != nil || js.Cost.Available || len(js.Cost.Actions) != 0 || js.Cost.Totals != nil ||
		!strings.Contains(js.Cost.Reason, "--offline") || !strings.Contains(string(res.stderr), "cost not available") {
		t.Errorf("--offline: %v %+v\n%s", err, js.Cost, res.stderr)
	}
	if len(rec.Requests()) != 0 {
		t.Errorf("--offline sent %d requests", len(rec.Requests()))
	}

	res = runDFD(t, "check", dir, "--cost", "--billing", "flat")
	if res.code != exitUsage {
		t.Errorf("--billing flat: exit %d", res.code)
	}
}
