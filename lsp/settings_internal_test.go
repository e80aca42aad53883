package lsp

import (
	"log/slog"
	"testing"
	"time"
)

func TestParseSettingsMetadataSource(t *testing.T) {
	want := Settings{MetadataSource: "bigquery", BigQueryEndpoint: "http://127.0.0.1:9050", BigQueryCredentials: "creds.json", MetadataSnapshot: "s.json"}
	for _, raw := range []string{
		`{"dfd": {"metadata": {"source": "bigquery", "snapshot": "s.json"}, "bigquery": {"endpoint": "http://127.0.0.1:9050", "credentials": "creds.json"}}}`,
		`{"dfd.metadata.source": "bigquery", "dfd.metadata.snapshot": "s.json", "dfd.bigquery.endpoint": "http://127.0.0.1:9050", "dfd.bigquery.credentials": "creds.json"}`,
		`{"metadata": {"source": "bigquery", "snapshot": "s.json"}, "bigquery.endpoint": "http://127.0.0.1:9050", "bigquery": {"credentials": "creds.json"}}`,
	} {
		if got := parseSettings([]byte(raw), Settings{}); got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	}
	// Unset keys keep their values.
	if got := parseSettings([]byte(`{"dfd": {"debounceMs": 5}}`), want); got.MetadataSource != "bigquery" || got.BigQueryEndpoint == "" {
		t.Errorf("kept settings: %+v", got)
	}
}

func TestParseSettingsNewKeys(t *testing.T) {
	want := Settings{JitTimeout: 300 * time.Millisecond, PreviewMaxBytesBilled: 1 << 30, ManualCompile: true, LogLevel: "debug"}
	for _, raw := range []string{
		`{"dfd": {"jit": {"timeoutMs": 300}, "preview": {"maxBytesBilled": 1073741824}, "compileAsYouType": false, "logLevel": "debug"}}`,
		`{"jit": {"timeoutMs": 300}, "preview": {"maxBytesBilled": 1073741824}, "compileAsYouType": false, "logLevel": "DEBUG"}`,
		`{"dfd.jit.timeoutMs": 300, "dfd.preview.maxBytesBilled": 1073741824, "dfd.compileAsYouType": false, "dfd.logLevel": "debug"}`,
		`{"jit.timeoutMs": 300, "preview": {"maxBytesBilled": 1073741824}, "dfd.compileAsYouType": false, "logLevel": "debug"}`,
		// Flat keys win over the nested form.
		`{"jit": {"timeoutMs": 5}, "jit.timeoutMs": 300, "preview.maxBytesBilled": 1073741824, "compileAsYouType": false, "logLevel": "debug"}`,
	} {
		if got := parseSettings([]byte(raw), Settings{}); got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	}
	cur := want
	cur.MetadataSnapshot = "s.json"
	cases := []struct {
		raw  string
		want func(s *Settings)
	}{
		// Absent keys keep their values.
		{`{"dfd": {"debounceMs": 5}}`, func(s *Settings) { s.Debounce = 5 * time.Millisecond }},
		{`{"dfd.debounceMs": 7}`, func(s *Settings) { s.Debounce = 7 * time.Millisecond }},
		// Out of range or of the wrong type: ignored.
		{`{"dfd": {"jit": {"timeoutMs": 0}}}`, func(*Settings) {}},
		{`{"dfd": {"jit": {"timeoutMs": -5}}}`, func(*Settings) {}},
		{`{"dfd": {"jit": {"timeoutMs": "300"}}}`, func(*Settings) {}},
		{`{"dfd": {"preview": {"maxBytesBilled": -1}}}`, func(*Settings) {}},
		{`{"dfd": {"logLevel": "verbose"}}`, func(*Settings) {}},
		{`{"dfd": {"compileAsYouType": "no"}}`, func(*Settings) {}},
		// Explicit values and null (the default).
		{`{"dfd": {"preview": {"maxBytesBilled": 0}}}`, func(s *Settings) { s.PreviewMaxBytesBilled = 0 }},
		{`{"dfd": {"compileAsYouType": true}}`, func(s *Settings) { s.ManualCompile = false }},
		{`{"dfd": {"jit": {"timeoutMs": 1500.5}}}`, func(s *Settings) { s.JitTimeout = 1500500 * time.Microsecond }},
		{`{"dfd.jit.timeoutMs": null, "dfd.preview.maxBytesBilled": null, "dfd.compileAsYouType": null, "dfd.logLevel": null}`,
			func(s *Settings) {
				s.JitTimeout, s.PreviewMaxBytesBilled, s.ManualCompile, s.LogLevel = 0, 0, false, ""
			}},
		{`{"dfd": {"logLevel": "warning"}}`, func(s *Settings) { s.LogLevel = "warning" }},
		{`{"dfd": {"metadata": {"snapshot": null}}}`, func(s *Settings) { s.MetadataSnapshot = "" }},
	}
	for _, c := range cases {
		w := cur
		c.want(&w)
		if got := parseSettings([]byte(c.raw), cur); got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", c.raw, got, w)
		}
	}
	for raw, want := range map[string]bool{
		`null`: false, `{}`: false, `{"dfd": {}}`: false, `{"editor": {"tabSize": 2}}`: false,
		`{"logLevel": "debug"}`: true, `{"dfd.compileAsYouType": false}`: true, `{"dfd": {"jit": {"timeoutMs": 3}}}`: true,
	} {
		if got := hasSettings([]byte(raw)); got != want {
			t.Errorf("hasSettings(%s) = %v", raw, got)
		}
	}
}

func TestParseLogLevel(t *testing.T) {
	for s, want := range map[string]slog.Level{"error": slog.LevelError, "warn": slog.LevelWarn, "Info": slog.LevelInfo, " debug ": slog.LevelDebug} {
		if got, ok := parseLogLevel(s); !ok || got != want {
			t.Errorf("parseLogLevel(%q) = %v, %v", s, got, ok)
		}
	}
	if _, ok := parseLogLevel("trace"); ok {
		t.Error("trace accepted")
	}
}
