package adapters

import "testing"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                          "SELECT 1",
		"SELECT 1\n\tFROM t":                "SELECT 1\n\tFROM t",
		"SELECT 1 --\r; DROP TABLE `d.t`\n": "SELECT 1 --␍; DROP TABLE `d.t`\n",
		"SELECT 1\r\n":                      "SELECT 1␍\n",
		"SELECT 1\x00":                      "SELECT 1␀",
		"a\x1bb\x7f":                        "a␛b␡",
		"\ufeffSELECT 1":                    "⟨U+FEFF⟩SELECT 1",
		"SELECT 'a\u202eb'":                 "SELECT 'a⟨U+202E⟩b'",
		"SELECT\u00a01":                     "SELECT⟨U+00A0⟩1",
		"a\u2028b\u200bc":                   "a⟨U+2028⟩b⟨U+200B⟩c",
		"a\x85b":                            "a⟨0x85⟩b",
		"a\u0085b":                          "a⟨U+0085⟩b",
		"SELECT 'ＤＲＯＰ', 'é', '👍'":           "SELECT 'ＤＲＯＰ', 'é', '👍'",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}
