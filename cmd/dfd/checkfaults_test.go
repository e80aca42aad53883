package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// faultProject reads one warehouse table through a chain of two views.
func faultProject(t *testing.T) string {
	return testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":     "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/src.sqlx":       "config { type: \"declaration\", schema: \"raw\", name: \"src\" }\n",
		"definitions/a.sqlx":         "config { type: \"view\" }\nSELECT id, name FROM ${ref(\"src\")}\n",
		"definitions/b.sqlx":         "config { type: \"view\" }\nSELECT id FROM ${ref(\"a\")}\n",
		"definitions/constants.sqlx": "config { type: \"view\" }\nSELECT 1 AS one\n",
	})
}

// A CI gate must not be green because it could not look: when BigQuery
// refuses the credentials, denies access, is down or never answers, and
// nothing is cached, dfd check says so first — what BigQuery said and how
// to fix it —, counts the statements it could not check, and exits 3
// (0 with --allow-unchecked, the causes still said), within a bounded
// time. Against the recording stand-in for BigQuery's REST API.
func TestCheckCommandBigQueryFaults(t *testing.T) {
	dir := faultProject(t)
	for _, tc := range []struct {
		fault bqrecorder.Fault
		cause []string // in the cause line
	}{
		{bqrecorder.FaultNone, nil},
		{bqrecorder.FaultUnauthenticated, []string{"refused the credentials", "UNAUTHENTICATED", "Request had invalid authentication credentials", "(HTTP 401)", "gcloud auth application-default login", "--metadata FILE"}},
		{bqrecorder.FaultForbidden, []string{"denied access", "PERMISSION_DENIED", "Access Denied", "(HTTP 403)", "roles/bigquery.metadataViewer"}},
		{bqrecorder.FaultUnavailable, []string{"could not answer", "UNAVAILABLE", "The service is currently unavailable.", "(HTTP 503)", "try again later"}},
		{bqrecorder.FaultHang, []string{"did not answer within 3s", "DEADLINE_EXCEEDED", "--metadata-timeout"}},
	} {
		name := string(tc.fault)
		if name == "" {
			name = "none"
		}
		t.Run(name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing cached
			rec := bqrecorder.Start(t, bqrecorder.Options{Fault: tc.fault})
			for _, allow := range []bool{false, true} {
				args := []string{"check", dir, "--endpoint", rec.URL, "--metadata-timeout", "3s"}
				if allow {
					args = append(args, "--allow-unchecked")
				}
				start := time.Now()
				res := runDFD(t, args...)
				took := time.Since(start)
				stderr := string(res.stderr)
				if took > 30*time.Second {
					t.Errorf("allow=%v: took %s", allow, took.Round(time.Second))
				}
				if tc.fault == bqrecorder.FaultNone {
					if res.code != exitOK || !strings.Contains(stderr, "3 statement(s) analysed, 0 not") || strings.Contains(stderr, "not checked") {
						t.Errorf("exit %d, want 0 with every statement analysed:\n%s", res.code, stderr)
					}
					continue
				}
				want := exitUnchecked
				if allow {
					want = exitOK
				}
				if res.code != want {
					t.Errorf("allow=%v: exit %d, want %d:\n%s", allow, res.code, want, stderr)
				}
				// The cause comes first, on one line, with the statements
				// it left unchecked: a, and b downstream of it.
				first, _, _ := strings.Cut(stderr, "\n")
				if !strings.HasPrefix(first, "dfd check: 2 statement(s) not checked: BigQuery (project p at "+rec.URL+")") {
					t.Errorf("allow=%v: first line %q", allow, first)
				}
				for _, w := range tc.cause {
					if !strings.Contains(first, w) {
						t.Errorf("allow=%v: the cause line lacks %q: %s", allow, w, first)
					}
				}
				if strings.Count(stderr, "not checked:") != 1 {
					t.Errorf("allow=%v: one cause, said once:\n%s", allow, stderr)
				}
				if !strings.Contains(stderr, "1 statement(s) analysed, 2 not") {
					t.Errorf("allow=%v: what needs no warehouse table is still checked:\n%s", allow, stderr)
				}
			}
			if len(rec.Requests()) == 0 {
				t.Error("BigQuery was never asked")
			}
		})
	}
}

// --json keeps stdout a findings array; the causes go to stderr, and the
// exit status says the check could not look.
func TestCheckCommandFaultJSON(t *testing.T) {
	dir := faultProject(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec := bqrecorder.Start(t, bqrecorder.Options{Fault: bqrecorder.FaultUnavailable})
	res := runDFD(t, "check", dir, "--endpoint", rec.URL, "--json")
	var findings []checkFinding
	if err := json.Unmarshal(res.stdout, &findings); err != nil || res.code != exitUnchecked {
		t.Errorf("exit %d, stdout (%v) %s", res.code, err, res.stdout)
	}
	for _, f := range findings {
		if f.Severity != "hint" || f.Code != "sql-skipped" {
			t.Errorf("finding %+v, want only the not-analysed hints", f)
		}
	}
	if !strings.Contains(string(res.stderr), "2 statement(s) not checked: BigQuery") {
		t.Errorf("stderr lacks the cause:\n%s", res.stderr)
	}
}

// With no metadata at all (--offline), what needs none is checked, and
// one line says how many statements were not and the command that would
// let them be; exit 3 unless --allow-unchecked. A downstream statement
// says its upstream was not analysed either, and why.
func TestCheckCommandOffline(t *testing.T) {
	dir := faultProject(t)
	res := runDFD(t, "check", dir, "--offline", "--verbose")
	stderr := string(res.stderr)
	if res.code != exitUnchecked {
		t.Errorf("exit %d, want 3:\n%s", res.code, stderr)
	}
	first, _, _ := strings.Cut(stderr, "\n")
	for _, w := range []string{"dfd check: 2 statement(s) not checked: no warehouse metadata (--offline)", "dfd metadata snapshot > metadata.json", "--metadata metadata.json"} {
		if !strings.Contains(first, w) {
			t.Errorf("first line lacks %q: %s", w, first)
		}
	}
	if !strings.Contains(string(res.stdout), "definitions/b.sqlx:1:1: hint: SQL not checked: it reads p.d.a, which dfd did not analyse either: p.raw.src's schema is unknown: there is no metadata source") {
		t.Errorf("b's hint:\n%s", res.stdout)
	}
	if strings.Contains(string(res.stdout), "a JiT action, or one with a problem") {
		t.Errorf("a downstream hint blames a JiT action:\n%s", res.stdout)
	}
	res = runDFD(t, "check", dir, "--offline", "--allow-unchecked")
	if res.code != exitOK || !strings.Contains(string(res.stderr), "no warehouse metadata (--offline)") {
		t.Errorf("--allow-unchecked: exit %d:\n%s", res.code, res.stderr)
	}
}

// No credentials at all: the connection cannot be opened, which is said
// with the fix, and the check exits 3.
func TestCheckCommandNoCredentials(t *testing.T) {
	dir := faultProject(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("DFD_BIGQUERY_ENDPOINT", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", dir+"/no-such-key.json")
	res := runDFD(t, "check", dir)
	first, _, _ := strings.Cut(string(res.stderr), "\n")
	if res.code != exitUnchecked || !strings.Contains(first, "2 statement(s) not checked: cannot connect to BigQuery") || !strings.Contains(first, "gcloud auth application-default login") {
		t.Errorf("exit %d:\n%s", res.code, res.stderr)
	}
}
