package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
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
		fault *bqrecorder.Fault
		cause []string // in the cause line
	}{
		{nil, nil},
		{bqrecorder.FaultUnauthenticated, []string{"refused the credentials", "UNAUTHENTICATED", "Request had invalid authentication credentials", "(HTTP 401)", "reached without authentication", "--metadata FILE"}},
		{bqrecorder.FaultForbidden, []string{"denied access", "PERMISSION_DENIED", "Access Denied", "(HTTP 403)", "roles/bigquery.metadataViewer"}},
		{bqrecorder.FaultUnavailable, []string{"could not answer", "UNAVAILABLE", "The service is currently unavailable.", "(HTTP 503)", "try again later"}},
		{bqrecorder.FaultHang, []string{"did not answer in time", "DEADLINE_EXCEEDED", "waits 3s in all", "--metadata-timeout"}},
	} {
		name := tc.fault.String()
		if name == "" {
			name = "none"
		}
		t.Run(name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing cached
			rec := bqrecorder.Start(t, bqrecorder.Options{Fault: bqrecorder.Always(tc.fault)})
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
				if tc.fault == nil {
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
	rec := bqrecorder.Start(t, bqrecorder.Options{Fault: bqrecorder.Always(bqrecorder.FaultUnavailable)})
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

// The fix for refused credentials fits the credentials that were used.
func TestCheckDescribeRefusedCredentials(t *testing.T) {
	refused := &adapters.Error{Code: adapters.Unauthenticated, Message: "BigQuery tables.get p.raw.src: Request had invalid authentication credentials. (HTTP 401)"}
	for _, tc := range []struct {
		creds *credentials.Resolved
		want  []string
	}{
		{&credentials.Resolved{Project: "p", Source: "application default credentials"},
			[]string{"BigQuery (project p via application default credentials) refused the credentials: UNAUTHENTICATED: BigQuery tables.get p.raw.src: Request had invalid authentication credentials. (HTTP 401)", "`gcloud auth application-default login`", "--metadata FILE"}},
		{&credentials.Resolved{Project: "p", Source: "service account ci@p.iam.gserviceaccount.com from /ci/key.json"},
			[]string{"via service account ci@p.iam.gserviceaccount.com from /ci/key.json", "renew or replace the key"}},
		{&credentials.Resolved{Project: "p", Endpoint: "http://127.0.0.1:9050", Source: "endpoint http://127.0.0.1:9050 (no authentication)"},
			[]string{"BigQuery (project p at http://127.0.0.1:9050)", "reached without authentication"}},
	} {
		w := &checkWarehouse{creds: tc.creds}
		got := w.describeFailure(refused, time.Minute)
		for _, s := range tc.want {
			if !strings.Contains(got, s) {
				t.Errorf("%s: %q lacks %q", tc.creds.Source, got, s)
			}
		}
		if tc.creds.Endpoint == "" && strings.Contains(got, "without authentication") || tc.creds.Source != "application default credentials" && strings.Contains(got, "gcloud") {
			t.Errorf("%s: a fix for other credentials: %q", tc.creds.Source, got)
		}
	}
}

// Cached metadata older than the command line's freshness is used when
// BigQuery cannot answer, and said: how old, and what BigQuery said. The
// check then exits 0: every statement was checked, against what BigQuery
// said before.
func TestCheckCommandStaleMetadata(t *testing.T) {
	dir := faultProject(t)
	for _, tc := range []struct {
		fault *bqrecorder.Fault
		said  string
	}{
		{bqrecorder.FaultUnavailable, "BigQuery: UNAVAILABLE: BigQuery tables.get p.raw.src: The service is currently unavailable. (HTTP 503)"},
		{bqrecorder.FaultUnauthenticated, "BigQuery: UNAUTHENTICATED:"},
		{bqrecorder.FaultHang, "BigQuery: DEADLINE_EXCEEDED"},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			rec := bqrecorder.Start(t, bqrecorder.Options{})
			// BigQuery answered three hours ago: the cache holds its answer.
			b, err := connect.Open(context.Background(), connect.Config{
				Config: credentials.Config{Endpoint: rec.URL, DefaultProject: "p", Getenv: func(string) string { return "" }},
				Cache:  cache.Options{Now: func() time.Time { return time.Now().Add(-3 * time.Hour) }},
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Cache.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "p", Schema: "raw", Name: "src"}}); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			rec.SetFault(tc.fault)
			res := runDFD(t, "check", dir, "--endpoint", rec.URL, "--metadata-timeout", "3s")
			stderr := string(res.stderr)
			if res.code != exitOK || !strings.Contains(stderr, "3 statement(s) analysed, 0 not") {
				t.Errorf("exit %d, want 0 with every statement analysed:\n%s", res.code, stderr)
			}
			first, _, _ := strings.Cut(stderr, "\n")
			if !strings.HasPrefix(first, "dfd check: schemas of 1 table(s) from the metadata cache, fetched up to 3h ago; ") || !strings.Contains(first, tc.said) {
				t.Errorf("first line %q, want the stale schemas said, with %q", first, tc.said)
			}
		})
	}
}

// The shipped example's JiT actions run against BigQuery: when it refuses
// the credentials, the statements they would have given are charged to
// that cause too, on the same one line, and the check exits 3.
func TestCheckCommandJitFaults(t *testing.T) {
	dir := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec := bqrecorder.Start(t, bqrecorder.Options{Fault: bqrecorder.Always(bqrecorder.FaultUnauthenticated)})
	res := runDFD(t, "check", dir, "--endpoint", rec.URL, "--metadata-timeout", "5s")
	stderr := string(res.stderr)
	if res.code != exitUnchecked || strings.Count(stderr, "not checked:") != 1 {
		t.Fatalf("exit %d, want 3 with one cause:\n%s", res.code, stderr)
	}
	m := regexp.MustCompile(`dfd check: (\d+) statement\(s\) not checked: BigQuery \(project acme-clickstream at [^)]*\) refused the credentials`).FindStringSubmatch(stderr)
	s := checkSummaryRE.FindStringSubmatch(stderr)
	if m == nil || s == nil {
		t.Fatalf("no cause line or no summary:\n%s", stderr)
	}
	if m[1] != s[2] {
		t.Errorf("%s statement(s) charged to BigQuery, %s not analysed in all: every one is BigQuery's doing here:\n%s", m[1], s[2], stderr)
	}
}
