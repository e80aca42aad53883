package gsql

import "testing"

func TestFingerprint(t *testing.T) {
	base := "SELECT a, b FROM `p.d.t` WHERE a > 1"
	for _, tc := range []struct {
		name, sql string
		same      bool
	}{
		{"layout", "select a,\n  b -- the b\nfrom `p.d.t`\nwhere a>1", true},
		{"comment block", "/* x */ SELECT a, b FROM `p.d.t` WHERE a > 1", true},
		{"constant", "SELECT a, b FROM `p.d.t` WHERE a > 2", false},
		{"column", "SELECT a, c FROM `p.d.t` WHERE a > 1", false},
		{"alias", "SELECT a, b AS c FROM `p.d.t` WHERE a > 1", false},
		{"table", "SELECT a, b FROM `p.d.u` WHERE a > 1", false},
		{"string", "SELECT a, b FROM `p.d.t` WHERE a > 1 AND b = 'x'", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ok, why, err := Fingerprint(base)
			if err != nil || !ok {
				t.Fatalf("base: %v %s", err, why)
			}
			b, ok, why, err := Fingerprint(tc.sql)
			if err != nil || !ok {
				t.Fatalf("%s: %v %s", tc.sql, err, why)
			}
			if (a == b) != tc.same {
				t.Errorf("Fingerprint(%q) == Fingerprint(%q): %v, want %v", base, tc.sql, a == b, tc.same)
			}
		})
	}
	if _, ok, why, err := Fingerprint("SELEC 1"); err != nil || ok || why == "" {
		t.Errorf("a syntax error: ok %v, why %q, err %v; want not ok with a reason", ok, why, err)
	}
}

func TestFingerprintStringLiteralsKept(t *testing.T) {
	a, _, _, _ := Fingerprint("SELECT 'x'")
	b, _, _, _ := Fingerprint("SELECT 'y'")
	if a == b {
		t.Error("two string literals have one fingerprint")
	}
}
