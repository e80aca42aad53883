package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/sqlcorpus"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestJitPreviewSafetyOnTheWire runs every statement of the preview corpus
// (CR-ended comments, literals full of semicolons, BOM, NUL, look-alikes,
// pipe syntax, EXTERNAL_QUERY, DML in CTEs, EXPORT DATA, temporary and
// remote functions, very long and deeply nested statements), each plainly
// and with hostile options, through `dfd jit` against a recording stand-in
// for BigQuery, and checks on the wire what was sent: nothing but the
// corpus's read-only queries ran for real, each with the default 10 GiB
// cap, the dfd=preview label and dfd's own location; no DELETE at all.
//
// The stand-in's dry runs call every statement a SELECT (a BigQuery that
// agrees with everything), so what runs for real is decided by dfd's own
// parser gate; a second run with a stand-in that calls everything DML
// shows BigQuery's verdict gating too: then nothing runs for real.
func TestJitPreviewSafetyOnTheWire(t *testing.T) {
	corpus := append(sqlcorpus.Load(t), sqlcorpus.Generated()...)
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/probe.js":   sqlcorpus.ProbeAction("probe", corpus),
	})
	var readOnly []string
	for _, e := range corpus {
		if e.ReadOnly() {
			readOnly = append(readOnly, e.SQL)
		}
	}

	t.Run("BigQuery agrees with everything", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		rec := bqrecorder.Start(t, bqrecorder.Options{})
		res := runDFD(t, "jit", dir, "--action", "probe", "--endpoint", rec.URL, "--jit-timeout", "120s")
		if res.code != 0 {
			t.Fatalf("exit %d:\n%s", res.code, res.stderr)
		}
		reqs := rec.Requests()
		real := sqlcorpus.CheckPreviewWire(t, reqs, corpus, 10<<30)
		// Each read-only query ran for real, once per option set (the
		// query cache answers nothing twice: the requests differ).
		var ran []string
		for _, r := range rec.Jobs() {
			if !r.DryRun {
				ran = append(ran, r.Statement)
			}
		}
		for _, s := range readOnly {
			if n := count(ran, s); n != 2 {
				t.Errorf("read-only query ran %d times, want 2: %.100q", n, s)
			}
		}
		if real != 2*len(readOnly) {
			t.Errorf("%d real jobs, want %d", real, 2*len(readOnly))
		}
		// The call list shows what a terminal would hide.
		if !strings.Contains(string(res.stderr), "SELECT 1 --␍; DROP TABLE `d.t`") {
			t.Errorf("the call list does not show the carriage return:\n%s", lastLines(string(res.stderr), 40))
		}
		if !strings.Contains(string(res.stderr), "DeleteTable test.d.precious") || !strings.Contains(string(res.stderr), "PERMISSION_DENIED") {
			t.Errorf("the refused delete is not in the call list")
		}
	})

	t.Run("BigQuery calls everything DML", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		rec := bqrecorder.Start(t, bqrecorder.Options{StatementType: func(string) string { return "INSERT" }})
		res := runDFD(t, "jit", dir, "--action", "probe", "--endpoint", rec.URL, "--jit-timeout", "120s")
		if res.code != 0 {
			t.Fatalf("exit %d:\n%s", res.code, res.stderr)
		}
		if real := sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 10<<30); real != 0 {
			t.Errorf("%d jobs ran for real although BigQuery's dry run called them DML", real)
		}
		if !strings.Contains(string(res.stderr), "BigQuery's dry run says INSERT") {
			t.Errorf("no note of BigQuery's verdict in the call list")
		}
	})

	t.Run("a lower cap and the loud opt-out", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		rec := bqrecorder.Start(t, bqrecorder.Options{})
		if res := runDFD(t, "jit", dir, "--action", "probe", "--endpoint", rec.URL, "--jit-timeout", "120s", "--max-bytes-billed", "1000000"); res.code != 0 {
			t.Fatalf("exit %d:\n%s", res.code, res.stderr)
		}
		sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 1000000)
		rec.Reset()
		res := runDFD(t, "jit", dir, "--action", "probe", "--endpoint", rec.URL, "--jit-timeout", "120s", "--unlimited-bytes-billed")
		if res.code != 0 {
			t.Fatalf("exit %d:\n%s", res.code, res.stderr)
		}
		// Uncapped, the JiT code's own limit is what is sent.
		sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 1099511627776)
		if !strings.Contains(string(res.stderr), "warning: --unlimited-bytes-billed") {
			t.Errorf("no warning for --unlimited-bytes-billed")
		}
	})
}

func count(list []string, s string) int {
	n := 0
	for i := slices.Index(list, s); i >= 0; i = slices.Index(list, s) {
		n++
		list = list[i+1:]
	}
	return n
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
