package main

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/sqlcheck"
)

// Exit statuses of dfd's commands, in one place (docs/commands.md says
// the same):
//
//	0  clean: nothing to report (dfd format --check: nothing to format)
//	1  errors found (compilation errors included; dfd format --check:
//	   files to format), or the command itself failed (its message says)
//	2  usage: unknown command, bad flags or arguments
//	3  dfd check could not check: statements were not analysed because
//	   the metadata source could not answer (credentials refused,
//	   unreachable, timed out) or there is none (--offline without
//	   --metadata); --allow-unchecked makes this 0, the causes still said
//
// Errors win over "could not check": an error found is certain, and the
// causes are printed either way.
const (
	exitOK        = 0
	exitFindings  = 1
	exitUsage     = 2
	exitUnchecked = 3
)

// defaultMetadataTimeout is how long dfd check waits for the warehouse's
// metadata in all (JiT actions' calls included) before it reports the
// source as not answering.
const defaultMetadataTimeout = 60 * time.Second

// checkWarehouse is where dfd check reads warehouse tables.
type checkWarehouse struct {
	source     adapters.DbAdapter // nil: no metadata at all
	snapshot   string             // --metadata FILE, when given
	offline    bool               // --offline without --metadata
	connectErr error              // BigQuery could not be opened (no credentials, a bad file)
	creds      *credentials.Resolved
	bq         *checkSource      // BigQuery through the cache, when opened
	bigquery   *bigquery.Adapter // BigQuery itself, when opened (dry runs of --cost)
	cache      *cache.Cache      // the metadata cache, when opened
	close      func()
}

// openCheckWarehouse opens the check's metadata source: the snapshot when
// given, else BigQuery through the metadata cache unless offline. Every
// metadata call ends by deadline.
func openCheckWarehouse(ctx context.Context, env *cmdEnv, dir string, res *compile.Result, snapshot string, offlineOnly bool, endpoint, credsFile string, deadline time.Time) (*checkWarehouse, error) {
	w := &checkWarehouse{snapshot: snapshot, close: func() {}}
	defaultDB := res.Graph.GetProjectConfig().GetDefaultDatabase()
	if snapshot != "" {
		a, err := offline.Load(snapshot, offline.Options{DefaultDatabase: defaultDB})
		if err != nil {
			return nil, err
		}
		w.source = a
		return w, nil
	}
	if offlineOnly {
		w.offline = true
		return w, nil
	}
	backend, err := connect.Open(ctx, connect.Config{
		Config: credentials.Config{
			Endpoint: endpoint, CredentialsFile: credsFile, ProjectDir: dir,
			DefaultProject: defaultDB, DefaultLocation: res.Graph.GetProjectConfig().GetDefaultLocation(),
			Getenv: env.getenv,
		},
		// The command line's freshness (as dfd metadata refresh): older
		// entries are fetched again, and when BigQuery cannot answer
		// they are served stale, with a note the check reports.
		Cache: cache.Options{TTL: connect.CLITTL, MaxStale: connect.CLITTL},
		Log:   func(format string, args ...any) { fmt.Fprintf(env.stderr, "warning: "+format+"\n", args...) },
	})
	if err != nil {
		w.connectErr = err
		return w, nil
	}
	w.creds = backend.Credentials
	w.bigquery, w.cache = backend.BigQuery, backend.Cache
	w.bq = &checkSource{Recorder: adapters.NewRecorder(backend.Cache), cache: backend.Cache, deadline: deadline}
	w.source = w.bq
	w.close = func() { backend.Close() }
	return w, nil
}

// checkSource is BigQuery behind the metadata cache, every call recorded
// (for the stale notes) and ended by the check's metadata deadline.
type checkSource struct {
	*adapters.Recorder
	cache    *cache.Cache
	deadline time.Time

	mu       sync.Mutex
	fromMemo int // tables answered from the cache alone, after the deadline
}

func (s *checkSource) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	ctx, cancel := context.WithDeadline(ctx, s.deadline)
	defer cancel()
	return s.Recorder.ListTables(ctx, req)
}

func (s *checkSource) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	ctx, cancel := context.WithDeadline(ctx, s.deadline)
	defer cancel()
	return s.Recorder.GetTable(ctx, req)
}

func (s *checkSource) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	ctx, cancel := context.WithDeadline(ctx, s.deadline)
	defer cancel()
	return s.Recorder.Execute(ctx, req)
}

// CachedTable implements sqlcheck.CachedSource: once the deadline passed,
// what the cache holds, of any age.
func (s *checkSource) CachedTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, bool, error) {
	m, ok, err := s.cache.CachedTable(ctx, req)
	if ok && err == nil {
		s.mu.Lock()
		s.fromMemo++
		s.mu.Unlock()
	}
	return m, ok, err
}

var _ sqlcheck.CachedSource = (*checkSource)(nil)

// checkCause is one reason statements could not be checked, said on one
// line at the top of the output.
type checkCause struct {
	line       string
	statements int
}

// opPrefixRE is the "BigQuery tables.get p.d.t: " an adapter error's
// message starts with: causes that differ only by table are one cause.
var opPrefixRE = regexp.MustCompile(`^BigQuery [A-Za-z.]+(?: [^\s:]+)?: `)

// uncheckedCauses are the reasons the check could not look, one per
// distinct cause, each with the statements it left unanalysed; none when
// every statement that needed warehouse metadata got it (or none did).
func (w *checkWarehouse) uncheckedCauses(out *sqlcheck.Result, metadataTimeout time.Duration) []checkCause {
	var causes []checkCause
	noMetadata, jit := 0, 0
	byKey := map[string]*checkCause{}
	var keys []string
	for _, b := range out.NotAnalysed {
		switch b.Cause {
		case sqlcheck.CauseNoMetadata:
			noMetadata += b.Statements
		case sqlcheck.CauseJit:
			// JiT code runs only against warehouse metadata: without
			// any, its SQL and what reads it wait for metadata too.
			if w.source == nil {
				noMetadata += b.Statements
				jit += b.Statements
			}
		case sqlcheck.CauseUnanswered:
			ae := adapters.AsError(b.Err)
			if ae == nil {
				ae = &adapters.Error{Code: adapters.Internal, Message: "no answer"}
			}
			key := string(ae.Code) + "\x00" + opPrefixRE.ReplaceAllString(ae.Message, "")
			c := byKey[key]
			if c == nil {
				c = &checkCause{line: w.describeFailure(ae, metadataTimeout)}
				byKey[key] = c
				keys = append(keys, key)
			}
			c.statements += b.Statements
		}
	}
	// JiT actions whose code ran against BigQuery but whose calls it
	// could not answer: charged to what BigQuery said to those calls.
	if jitBlocked := w.jitBlockedByBigQuery(out); jitBlocked > 0 {
		if ae := w.firstFailedCall(); ae != nil {
			key := string(ae.Code) + "\x00" + opPrefixRE.ReplaceAllString(ae.Message, "")
			c := byKey[key]
			if c == nil {
				c = &checkCause{line: w.describeFailure(ae, metadataTimeout)}
				byKey[key] = c
				keys = append(keys, key)
			}
			c.statements += jitBlocked
		}
	}
	for _, k := range keys {
		causes = append(causes, *byKey[k])
	}
	sort.SliceStable(causes, func(i, j int) bool { return causes[i].statements > causes[j].statements })
	if noMetadata > 0 {
		switch {
		case w.connectErr != nil:
			causes = append(causes, checkCause{statements: noMetadata, line: "cannot connect to BigQuery: " + firstLineOf(w.connectErr.Error()) +
				"; fix: run `gcloud auth application-default login` or pass --credentials FILE, or check against a snapshot: --metadata FILE (`dfd metadata snapshot > metadata.json` where BigQuery is reachable)"})
		default:
			var parts []string
			if n := noMetadata - jit; n > 0 {
				parts = append(parts, fmt.Sprintf("%d read warehouse tables whose schemas dfd does not know", n))
			}
			if jit > 0 {
				parts = append(parts, fmt.Sprintf("%d are JiT actions (their code runs only against metadata) or read them", jit))
			}
			what := strings.Join(parts, ", ")
			causes = append(causes, checkCause{statements: noMetadata, line: "no warehouse metadata (--offline): " + what +
				"; to check them: `dfd metadata snapshot > metadata.json` where BigQuery is reachable, commit it and run `dfd check --metadata metadata.json`, or give dfd BigQuery credentials (`gcloud auth application-default login`)"})
		}
	}
	return causes
}

// jitBlockedByBigQuery counts the statements not analysed because a JiT
// action's code did not give its SQL, when BigQuery is the source.
func (w *checkWarehouse) jitBlockedByBigQuery(out *sqlcheck.Result) int {
	if w.bq == nil {
		return 0
	}
	n := 0
	for _, b := range out.NotAnalysed {
		if b.Cause == sqlcheck.CauseJit {
			n += b.Statements
		}
	}
	return n
}

// firstFailedCall is the first metadata or query call BigQuery refused or
// could not answer (nil: none; a missing table is an answer).
func (w *checkWarehouse) firstFailedCall() *adapters.Error {
	for _, c := range w.bq.Calls() {
		switch c.Code {
		case adapters.Unauthenticated, adapters.PermissionDenied, adapters.Unavailable, adapters.DeadlineExceeded, adapters.ResourceExhausted:
			msg := strings.TrimPrefix(c.Error, string(c.Code)+": ")
			return &adapters.Error{Code: c.Code, Message: msg}
		}
	}
	return nil
}

// describeFailure says what the metadata source answered, which
// credentials it was (connect.Describe: the editor's status says the
// same), and how to fix it from the command line.
func (w *checkWarehouse) describeFailure(ae *adapters.Error, metadataTimeout time.Duration) string {
	line := connect.Describe(ae, w.creds)
	snapshot := "or check against a snapshot: --metadata FILE (`dfd metadata snapshot > metadata.json` where BigQuery answers)"
	switch ae.Code {
	case adapters.Unauthenticated:
		switch {
		case w.creds != nil && w.creds.Endpoint != "":
			return line + "; fix: the endpoint (--endpoint, $" + credentials.EndpointEnv + ") is reached without authentication, and it asks for some: use one that does not, or none to use credentials, " + snapshot
		case w.creds != nil && !strings.Contains(w.creds.Source, "application default credentials"):
			return line + "; fix: renew or replace the key, pass other credentials (--credentials FILE), " + snapshot
		}
		return line + "; fix: run `gcloud auth application-default login`, pass --credentials FILE, " + snapshot
	case adapters.PermissionDenied:
		return line + "; fix: grant that identity BigQuery metadata access (roles/bigquery.metadataViewer) on the datasets, use other credentials (--credentials FILE), " + snapshot
	case adapters.DeadlineExceeded:
		return fmt.Sprintf("%s (dfd check waits %s in all); fix: try again, allow more time (--metadata-timeout), %s", line, metadataTimeout, snapshot)
	case adapters.Unavailable, adapters.ResourceExhausted:
		return line + "; fix: try again later, " + snapshot
	}
	return line + "; " + snapshot
}

// staleLine says that cached metadata older than the command line's
// freshness was used because BigQuery could not answer, and what it said;
// "" when none was.
func (w *checkWarehouse) staleLine() string {
	if w.bq == nil {
		return ""
	}
	tables := map[string]bool{}
	var oldest time.Duration
	said := ""
	for _, c := range w.bq.Calls() {
		for _, n := range c.Notes {
			if !strings.HasPrefix(n, "stale:") {
				continue
			}
			tables[c.Summary] = true
			if m := staleAgeRE.FindStringSubmatch(n); m != nil {
				if d, err := time.ParseDuration(m[1]); err == nil && d > oldest {
					oldest = d
				}
			}
			if _, after, ok := strings.Cut(n, "; BigQuery: "); ok && said == "" {
				said = after
			} else if _, after, ok := strings.Cut(n, "; last refresh failed: "); ok && said == "" {
				said = after
			}
		}
	}
	w.bq.mu.Lock()
	memo := w.bq.fromMemo
	w.bq.mu.Unlock()
	if len(tables) == 0 && memo == 0 {
		return ""
	}
	line := fmt.Sprintf("schemas of %d table(s) from the metadata cache", len(tables)+memo)
	if oldest > 0 {
		line += ", fetched up to " + connect.Age(oldest) + " ago"
	}
	if said != "" {
		line += "; BigQuery: " + firstLineOf(said)
	} else {
		line += "; BigQuery did not answer in the time allowed"
	}
	return line
}

var staleAgeRE = regexp.MustCompile(`fetched (\S+) ago`)

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
