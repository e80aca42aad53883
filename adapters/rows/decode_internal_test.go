package rows

import (
	"encoding/json"
	"testing"

	"github.com/dfdtools/dfd/adapters"
)

// Values the emulator cannot produce, decoded as BigQuery sends them.
func TestDecodeValue(t *testing.T) {
	for _, tc := range []struct {
		typ, in string
		want    string // JSON
	}{
		{"FLOAT", "NaN", `"NaN"`},
		{"FLOAT", "Infinity", `"Infinity"`},
		{"FLOAT", "-Infinity", `"-Infinity"`},
		{"FLOAT", "1e300", `1e+300`},
		{"INTEGER", "-9007199254740992", `-9007199254740992`},
		{"INTEGER", "-9007199254740993", `"-9007199254740993"`},
		{"TIMESTAMP", "1.7040672E9", `"2024-01-01 00:00:00 UTC"`},
		{"TIMESTAMP", "1704067200.000001", `"2024-01-01 00:00:00.000001 UTC"`},
		{"TIMESTAMP", "-1.0E0", `"1969-12-31 23:59:59 UTC"`},
		{"TIMESTAMP", "2024-01-01T00:00:00Z", `"2024-01-01T00:00:00Z"`}, // not BigQuery's form: kept
		{"BIGNUMERIC", "123456789012345678901234567890.5", `"123456789012345678901234567890.5"`},
		{"JSON", `{"a":1}`, `"{\"a\":1}"`},
		{"BYTES", "AAE=", `"AAE="`},
	} {
		v, err := decodeValue(tc.in, &adapters.Column{Type: tc.typ})
		if err != nil {
			t.Errorf("%s %q: %v", tc.typ, tc.in, err)
			continue
		}
		b, _ := json.Marshal(v)
		if string(b) != tc.want {
			t.Errorf("%s %q = %s, want %s", tc.typ, tc.in, b, tc.want)
		}
	}
	for _, tc := range []struct{ typ, in string }{{"INTEGER", "1.5"}, {"BOOLEAN", "yes"}, {"FLOAT", "x"}} {
		if _, err := decodeValue(tc.in, &adapters.Column{Type: tc.typ}); err == nil {
			t.Errorf("%s %q: no error", tc.typ, tc.in)
		}
	}
	// A row that does not match its schema is an error, not a crash.
	if _, err := decodeRecord(map[string]any{"f": []any{}}, []*adapters.Column{{Name: "a", Type: "STRING"}}); err == nil {
		t.Error("a row without its column: no error")
	}
}
