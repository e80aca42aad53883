package policy

import (
	"context"
	"maps"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// spy records what reaches the wrapped adapter.
type spy struct {
	execs   []*dataformpb.ExecuteRequest
	deletes []*dataformpb.DeleteTableRequest
	lists   int
	gets    int
}

func (s *spy) Execute(_ context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	s.execs = append(s.execs, req)
	return &dataformpb.ExecuteResponse{}, nil
}

func (s *spy) ListTables(context.Context, *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	s.lists++
	return &dataformpb.ListTablesResponse{}, nil
}

func (s *spy) GetTable(_ context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	s.gets++
	return &dataformpb.TableMetadata{Target: req.GetTarget()}, nil
}

func (s *spy) DeleteTable(_ context.Context, req *dataformpb.DeleteTableRequest) error {
	s.deletes = append(s.deletes, req)
	return nil
}

var target = &dataformpb.Target{Database: "acme", Schema: "clicks", Name: "scratch_1"}

func TestExecute(t *testing.T) {
	type want struct {
		dryRun    bool
		byteLimit int64
		labels    map[string]string
		prefix    string
		location  string
		resv      string
		noOptions bool // BigQueryOptions left unset
	}
	tests := []struct {
		name   string
		policy Policy
		req    *dataformpb.ExecuteRequest
		want   want
	}{
		{
			name:   "preview select runs for real with cap and label",
			policy: Policy{MaxBytesBilled: 1 << 30},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", FetchResults: true},
			want:   want{byteLimit: 1 << 30, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview insert becomes a dry run",
			policy: Policy{Mode: Preview},
			req:    &dataformpb.ExecuteRequest{Statement: "INSERT INTO t VALUES (1)"},
			want:   want{dryRun: true, byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview script becomes a dry run",
			policy: Policy{},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1; DROP TABLE x"},
			want:   want{dryRun: true, byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview keeps a lower request byte limit",
			policy: Policy{MaxBytesBilled: 1000},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", ByteLimit: 10},
			want:   want{byteLimit: 10, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview lowers a higher request byte limit",
			policy: Policy{MaxBytesBilled: 1000},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", ByteLimit: 5000},
			want:   want{byteLimit: 1000, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview without a cap gets the default cap",
			policy: Policy{},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1"},
			want:   want{byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview default cap lowers a higher request limit",
			policy: Policy{},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", ByteLimit: 1 << 40},
			want:   want{byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "unlimited leaves the byte limit alone",
			policy: Policy{UnlimitedBytesBilled: true, MaxBytesBilled: 1000},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", ByteLimit: 5000},
			want:   want{byteLimit: 5000, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "run without a cap leaves the byte limit alone",
			policy: Policy{Mode: Run},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", ByteLimit: 5000},
			want:   want{byteLimit: 5000, noOptions: true},
		},
		{
			name:   "preview ignores the JiT code's location and reservation",
			policy: Policy{Location: "US", Reservation: "dfd-slots"},
			req: &dataformpb.ExecuteRequest{Statement: "SELECT 1", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{
				Location: "EU", Reservation: "someone-elses",
			}},
			want: want{byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}, location: "US", resv: "dfd-slots"},
		},
		{
			name:   "preview legacy SQL becomes a dry run",
			policy: Policy{},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{UseLegacySql: true}},
			want:   want{dryRun: true, byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview comment ended by a carriage return is a script",
			policy: Policy{},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1 --\r; DROP TABLE `d.t`\n"},
			want:   want{dryRun: true, byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview external query becomes a dry run",
			policy: Policy{},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT * FROM EXTERNAL_QUERY('c', 'DELETE FROM users')"},
			want:   want{dryRun: true, byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
		{
			name:   "preview labels: policy, then request, then dfd=preview",
			policy: Policy{Labels: map[string]string{"team": "data", "env": "dev"}},
			req: &dataformpb.ExecuteRequest{Statement: "SELECT 1", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{
				Labels: map[string]string{"team": "growth", "dfd": "prod"},
			}},
			want: want{byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"team": "growth", "env": "dev", "dfd": "preview"}},
		},
		{
			name: "run merges options like the CLI",
			policy: Policy{Mode: Run, Labels: map[string]string{"team": "data", "env": "prod"},
				JobPrefix: "nightly", Location: "EU", Reservation: "r1"},
			req: &dataformpb.ExecuteRequest{Statement: "DELETE FROM t WHERE true", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{
				Labels: map[string]string{"team": "growth"}, JobPrefix: "jit", Location: "US",
			}},
			want: want{labels: map[string]string{"team": "growth", "env": "prod"}, prefix: "nightly-jit", location: "US", resv: "r1"},
		},
		{
			name:   "run with only a request prefix",
			policy: Policy{Mode: Run},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{JobPrefix: "jit"}},
			want:   want{prefix: "jit"},
		},
		{
			name:   "run with nothing to add passes the request through",
			policy: Policy{Mode: Run},
			req:    &dataformpb.ExecuteRequest{Statement: "CREATE TABLE t AS SELECT 1"},
			want:   want{noOptions: true},
		},
		{
			name:   "run dry-run mode",
			policy: Policy{Mode: Run, DryRun: true},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1"},
			want:   want{dryRun: true},
		},
		{
			name:   "request dry run is kept",
			policy: Policy{Mode: Run},
			req:    &dataformpb.ExecuteRequest{Statement: "SELECT 1", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true}},
			want:   want{dryRun: true},
		},
		{
			name:   "unknown mode is a preview",
			policy: Policy{Mode: Mode(7)},
			req:    &dataformpb.ExecuteRequest{Statement: "DROP TABLE t"},
			want:   want{dryRun: true, byteLimit: DefaultMaxBytesBilled, labels: map[string]string{"dfd": "preview"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &spy{}
			orig := proto.Clone(tt.req)
			if _, err := tt.policy.Wrap(s).Execute(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(tt.req, orig) {
				t.Errorf("caller's request was modified: %v", tt.req)
			}
			if len(s.execs) != 1 {
				t.Fatalf("inner Execute called %d times", len(s.execs))
			}
			got := s.execs[0]
			if got.GetStatement() != tt.req.GetStatement() || got.GetFetchResults() != tt.req.GetFetchResults() {
				t.Errorf("statement/fetch changed: %v", got)
			}
			if got.GetByteLimit() != tt.want.byteLimit {
				t.Errorf("byte_limit = %d, want %d", got.GetByteLimit(), tt.want.byteLimit)
			}
			o := got.GetBigQueryOptions()
			if tt.want.noOptions != (o == nil) {
				t.Errorf("big_query_options = %v, want unset: %v", o, tt.want.noOptions)
			}
			if o.GetDryRun() != tt.want.dryRun {
				t.Errorf("dry_run = %v, want %v", o.GetDryRun(), tt.want.dryRun)
			}
			if !maps.Equal(o.GetLabels(), tt.want.labels) {
				t.Errorf("labels = %v, want %v", o.GetLabels(), tt.want.labels)
			}
			if o.GetJobPrefix() != tt.want.prefix || o.GetLocation() != tt.want.location || o.GetReservation() != tt.want.resv {
				t.Errorf("prefix/location/reservation = %q/%q/%q, want %q/%q/%q",
					o.GetJobPrefix(), o.GetLocation(), o.GetReservation(), tt.want.prefix, tt.want.location, tt.want.resv)
			}
		})
	}
}

func TestDeleteTable(t *testing.T) {
	tests := []struct {
		name       string
		policy     Policy
		wantCode   adapters.Code
		wantInner  bool
		wantDryRun bool
	}{
		{name: "preview refuses", policy: Policy{Mode: Preview}, wantCode: adapters.PermissionDenied},
		{name: "preview with dry run still refuses", policy: Policy{Mode: Preview, DryRun: true}, wantCode: adapters.PermissionDenied},
		{name: "check refuses", policy: Policy{Mode: Check}, wantCode: adapters.PermissionDenied},
		{name: "run dry-run is a no-op", policy: Policy{Mode: Run, DryRun: true}, wantDryRun: true},
		{name: "run deletes", policy: Policy{Mode: Run}, wantInner: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &spy{}
			rec := adapters.NewRecorder(tt.policy.Wrap(s))
			err := rec.DeleteTable(context.Background(), &dataformpb.DeleteTableRequest{Target: target})
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Errorf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if (len(s.deletes) == 1) != tt.wantInner {
				t.Errorf("inner DeleteTable calls = %d, want reached: %v", len(s.deletes), tt.wantInner)
			}
			calls := rec.Calls()
			if len(calls) != 1 || calls[0].DryRun != tt.wantDryRun || calls[0].Code != tt.wantCode {
				t.Errorf("recorded %+v", calls)
			}
		})
	}
}

func TestDeleteTableMessage(t *testing.T) {
	err := Policy{}.Wrap(&spy{}).DeleteTable(context.Background(), &dataformpb.DeleteTableRequest{Target: target})
	want := "PERMISSION_DENIED: dfd preview: DeleteTable(acme.clicks.scratch_1) is not executed in preview"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestDryRunIsRecorded(t *testing.T) {
	rec := adapters.NewRecorder(Policy{}.Wrap(&spy{}))
	ctx := context.Background()
	rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1"})
	rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "MERGE t USING u ON true\nWHEN MATCHED THEN DELETE"})
	calls := rec.Calls()
	if len(calls) != 2 {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[0].DryRun || len(calls[0].Notes) != 0 {
		t.Errorf("SELECT recorded as %+v", calls[0])
	}
	if !calls[1].DryRun || len(calls[1].Notes) != 1 || calls[1].Notes[0] != "preview: MERGE statement, executed as a dry run" {
		t.Errorf("MERGE recorded as %+v", calls[1])
	}
	if calls[1].Summary != "MERGE t USING u ON true …" {
		t.Errorf("summary = %q", calls[1].Summary)
	}
}

func TestReadsPassThrough(t *testing.T) {
	for _, mode := range []Mode{Preview, Check, Run} {
		s := &spy{}
		a := Policy{Mode: mode}.Wrap(s)
		if _, err := a.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "acme", Schema: "clicks"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target}); err != nil {
			t.Fatal(err)
		}
		if s.lists != 1 || s.gets != 1 {
			t.Errorf("%v: lists=%d gets=%d", mode, s.lists, s.gets)
		}
	}
}

func TestWrapCopiesLabels(t *testing.T) {
	labels := map[string]string{"team": "data"}
	s := &spy{}
	a := Policy{Mode: Run, Labels: labels}.Wrap(s)
	labels["team"] = "changed"
	a.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "SELECT 1"})
	if got := s.execs[0].GetBigQueryOptions().GetLabels()["team"]; got != "data" {
		t.Errorf("label = %q, want the value at Wrap time", got)
	}
}

// verifier is a backend that judges statements (BigQuery's dry run) and
// keeps query answers (the cache).
type verifier struct {
	spy
	verdict  *adapters.Verdict
	err      error
	verifies []*dataformpb.ExecuteRequest
	cached   map[string]*dataformpb.ExecuteResponse // by statement
}

func (v *verifier) Verify(_ context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	v.verifies = append(v.verifies, req)
	if v.err != nil {
		return nil, v.err
	}
	out := *v.verdict
	return &out, nil
}

func (v *verifier) CachedExecute(_ context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, bool) {
	r, ok := v.cached[req.GetStatement()]
	return r, ok
}

func TestVerdictGate(t *testing.T) {
	dryAnswer := &dataformpb.ExecuteResponse{SchemaFields: []*dataformpb.Field{{Name: "x"}}}
	tests := []struct {
		name     string
		verdict  *adapters.Verdict
		err      error
		policy   Policy
		wantExec bool // the statement ran for real
		wantNote string
		wantCode adapters.Code
	}{
		{name: "SELECT runs", verdict: &adapters.Verdict{StatementType: "SELECT", Bytes: 100}, wantExec: true},
		{name: "DML by BigQuery's account stays a dry run", verdict: &adapters.Verdict{StatementType: "INSERT", Response: dryAnswer},
			wantNote: "preview: BigQuery's dry run says INSERT, answered by the dry run"},
		{name: "no statement type stays a dry run", verdict: &adapters.Verdict{Response: dryAnswer},
			wantNote: "preview: BigQuery's dry run says no statement type, answered by the dry run"},
		{name: "routines stay a dry run", verdict: &adapters.Verdict{StatementType: "SELECT", Routines: []string{"p.d.remote_fn"}, Response: dryAnswer},
			wantNote: "preview: BigQuery's dry run says it references p.d.remote_fn, answered by the dry run"},
		{name: "over the cap stays a dry run", verdict: &adapters.Verdict{StatementType: "SELECT", Bytes: 3 << 30, Response: dryAnswer},
			policy:   Policy{MaxBytesBilled: 1 << 30},
			wantNote: "preview: BigQuery's dry run says it would process 3.0 GiB, more than the preview's cap of 1.0 GiB, answered by the dry run"},
		{name: "unlimited ignores the bytes", verdict: &adapters.Verdict{StatementType: "SELECT", Bytes: 1 << 50},
			policy: Policy{UnlimitedBytesBilled: true}, wantExec: true},
		{name: "failing dry run fails the call", err: adapters.Errorf(adapters.InvalidArgument, "Unrecognized name: x"), wantCode: adapters.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &verifier{verdict: tt.verdict, err: tt.err}
			rec := adapters.NewRecorder(tt.policy.Wrap(v))
			resp, err := rec.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "SELECT x FROM `p.d.t`"})
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, tt.wantCode)
			}
			if len(v.verifies) != 1 || !v.verifies[0].GetBigQueryOptions().GetDryRun() {
				t.Fatalf("verifies = %v", v.verifies)
			}
			if got := v.verifies[0].GetBigQueryOptions().GetLabels()["dfd"]; got != "preview" {
				t.Errorf("the verifying dry run has no dfd=preview label: %v", v.verifies[0])
			}
			if (len(v.execs) == 1) != tt.wantExec {
				t.Errorf("executions = %v, want run for real: %v", v.execs, tt.wantExec)
			}
			if tt.wantExec && v.execs[0].GetBigQueryOptions().GetDryRun() {
				t.Errorf("executed as a dry run: %v", v.execs[0])
			}
			call := rec.Calls()[0]
			if tt.wantNote != "" {
				if !call.DryRun || len(call.Notes) != 1 || call.Notes[0] != tt.wantNote {
					t.Errorf("recorded %+v, want dry run with note %q", call, tt.wantNote)
				}
				if !proto.Equal(resp, dryAnswer) {
					t.Errorf("answer %v, want the dry run's", resp)
				}
			}
		})
	}
}

func TestCheckMode(t *testing.T) {
	ctx := context.Background()
	cachedAnswer := &dataformpb.ExecuteResponse{Errors: []string{"kept"}}
	v := &verifier{verdict: &adapters.Verdict{StatementType: "SELECT"}, cached: map[string]*dataformpb.ExecuteResponse{"SELECT 1": cachedAnswer}}
	rec := adapters.NewRecorder(Policy{Mode: Check}.Wrap(v))

	resp, err := rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1"})
	if err != nil || !proto.Equal(resp, cachedAnswer) {
		t.Fatalf("cached query: %v %v", resp, err)
	}
	if len(v.execs)+len(v.verifies) != 0 {
		t.Fatalf("a cached answer reached the backend: %v %v", v.execs, v.verifies)
	}
	if _, err := rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 2"}); err != nil {
		t.Fatal(err)
	}
	if len(v.execs) != 1 || !v.execs[0].GetBigQueryOptions().GetDryRun() || len(v.verifies) != 0 {
		t.Fatalf("uncached query in check mode: execs %v verifies %v", v.execs, v.verifies)
	}
	if got := v.execs[0].GetByteLimit(); got != DefaultMaxBytesBilled {
		t.Errorf("byte limit %d", got)
	}
	calls := rec.Calls()
	if !strings.Contains(calls[0].Notes[0], "query cache") || !calls[1].DryRun ||
		calls[1].Notes[0] != "check after a compile: queries run only in a preview you ask for, executed as a dry run" {
		t.Errorf("calls %+v", calls)
	}
	if err := rec.DeleteTable(ctx, &dataformpb.DeleteTableRequest{Target: target}); adapters.CodeOf(err) != adapters.PermissionDenied {
		t.Errorf("delete in check mode: %v", err)
	}
}

type unbilled struct{ spy }

func (unbilled) Unbilled() {}

func TestCheckModeUnbilledRuns(t *testing.T) {
	u := &unbilled{}
	if _, err := (Policy{Mode: Check}).Wrap(u).Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "SELECT 1"}); err != nil {
		t.Fatal(err)
	}
	if len(u.execs) != 1 || u.execs[0].GetBigQueryOptions().GetDryRun() {
		t.Fatalf("an unbilled backend's query should run as in a preview: %v", u.execs)
	}
}
