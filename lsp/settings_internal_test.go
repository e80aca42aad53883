package lsp

import "testing"

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
