package settings

import (
	"testing"
	"time"
)

func parse(raw string, cur Settings) Settings {
	s, _ := Parse([]byte(raw), cur)
	return s
}

func TestParseShapes(t *testing.T) {
	want := Defaults()
	want.MetadataSource, want.BigQueryEndpoint, want.BigQueryCredentials, want.MetadataSnapshot = "bigquery", "http://127.0.0.1:9050", "creds.json", "s.json"
	for _, raw := range []string{
		`{"dfd": {"metadata": {"source": "bigquery", "snapshot": "s.json"}, "bigquery": {"endpoint": "http://127.0.0.1:9050", "credentials": "creds.json"}}}`,
		`{"dfd.metadata.source": "bigquery", "dfd.metadata.snapshot": "s.json", "dfd.bigquery.endpoint": "http://127.0.0.1:9050", "dfd.bigquery.credentials": "creds.json"}`,
		`{"metadata": {"source": "bigquery", "snapshot": "s.json"}, "bigquery.endpoint": "http://127.0.0.1:9050", "bigquery": {"credentials": "creds.json"}}`,
	} {
		if got := parse(raw, Defaults()); got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	}
	// Unset keys keep their values.
	if got := parse(`{"dfd": {"debounceMs": 5}}`, want); got.MetadataSource != "bigquery" || got.BigQueryEndpoint == "" {
		t.Errorf("kept settings: %+v", got)
	}
	if _, ok := Parse([]byte(`[1]`), want); ok {
		t.Error("an array was read as settings")
	}
}

func TestParseValues(t *testing.T) {
	want := Defaults()
	want.JitTimeout, want.PreviewMaxBytesBilled, want.CompileAsYouType, want.LogLevel = 300*time.Millisecond, 1<<30, false, "debug"
	for _, raw := range []string{
		`{"dfd": {"jit": {"timeoutMs": 300}, "preview": {"maxBytesBilled": 1073741824}, "compileAsYouType": false, "logLevel": "debug"}}`,
		`{"jit": {"timeoutMs": 300}, "preview": {"maxBytesBilled": 1073741824}, "compileAsYouType": false, "logLevel": "DEBUG"}`,
		`{"dfd.jit.timeoutMs": 300, "dfd.preview.maxBytesBilled": 1073741824, "dfd.compileAsYouType": false, "dfd.logLevel": "debug"}`,
		`{"jit.timeoutMs": 300, "preview": {"maxBytesBilled": 1073741824}, "dfd.compileAsYouType": false, "logLevel": "debug"}`,
		// Flat keys win over the nested form.
		`{"jit": {"timeoutMs": 5}, "jit.timeoutMs": 300, "preview.maxBytesBilled": 1073741824, "compileAsYouType": false, "logLevel": "debug"}`,
	} {
		if got := parse(raw, Defaults()); got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	}
	cur := want
	cur.MetadataSnapshot = "s.json"
	cases := []struct {
		raw  string
		want func(s *Settings)
	}{
		{`{"dfd": {"debounceMs": 5}}`, func(s *Settings) { s.Debounce = 5 * time.Millisecond }},
		{`{"dfd.debounceMs": 7}`, func(s *Settings) { s.Debounce = 7 * time.Millisecond }},
		// Out of range or of the wrong type: ignored.
		{`{"dfd": {"jit": {"timeoutMs": 0}}}`, func(*Settings) {}},
		{`{"dfd": {"jit": {"timeoutMs": -5}}}`, func(*Settings) {}},
		{`{"dfd": {"jit": {"timeoutMs": "300"}}}`, func(*Settings) {}},
		{`{"dfd": {"preview": {"maxBytesBilled": -1}}}`, func(*Settings) {}},
		{`{"dfd": {"preview": {"maxBytesBilled": 1.5}}}`, func(*Settings) {}},
		{`{"dfd": {"logLevel": "verbose"}}`, func(*Settings) {}},
		{`{"dfd": {"compileAsYouType": "no"}}`, func(*Settings) {}},
		// An unknown metadata source is kept, for the backend to report.
		{`{"dfd": {"metadata": {"source": "Postgres"}}}`, func(s *Settings) { s.MetadataSource = "Postgres" }},
		{`{"dfd": {"metadata": {"source": " BigQuery "}}}`, func(s *Settings) { s.MetadataSource = "bigquery" }},
		// Explicit values and null (the default).
		{`{"dfd": {"preview": {"maxBytesBilled": 0}}}`, func(s *Settings) { s.PreviewMaxBytesBilled = 0 }},
		{`{"dfd": {"preview": {"unlimitedBytesBilled": true}}}`, func(s *Settings) { s.PreviewUnlimitedBytesBilled = true }},
		{`{"dfd": {"compileAsYouType": true}}`, func(s *Settings) { s.CompileAsYouType = true }},
		{`{"dfd": {"jit": {"timeoutMs": 1500.5}}}`, func(s *Settings) { s.JitTimeout = 1500500 * time.Microsecond }},
		{`{"dfd.jit.timeoutMs": null, "dfd.preview.maxBytesBilled": null, "dfd.compileAsYouType": null, "dfd.logLevel": null}`,
			func(s *Settings) {
				s.JitTimeout, s.PreviewMaxBytesBilled, s.CompileAsYouType, s.LogLevel = 0, 0, true, ""
			}},
		{`{"dfd": {"metadata": {"snapshot": null}}}`, func(s *Settings) { s.MetadataSnapshot = "" }},
	}
	for _, c := range cases {
		w := cur
		c.want(&w)
		if got := parse(c.raw, cur); got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", c.raw, got, w)
		}
	}
	for raw, want := range map[string]bool{
		`null`: false, `{}`: false, `{"dfd": {}}`: false, `{"editor": {"tabSize": 2}}`: false,
		`{"logLevel": "debug"}`: true, `{"dfd.compileAsYouType": false}`: true, `{"dfd": {"jit": {"timeoutMs": 3}}}`: true,
		`{"dfd": {"preview": {"updateWhileTyping": false}}}`: false, // the extension's own
	} {
		if got := Has([]byte(raw)); got != want {
			t.Errorf("Has(%s) = %v", raw, got)
		}
	}
}
