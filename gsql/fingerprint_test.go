package gsql

import "testing"

func TestFingerprint(t *testing.T) {
	base := "SELECT a, COUNT(*) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.t` WHERE a > 1 GROUP BY a, b"
	for _, tc := range []struct {
		name, sql string
		same      bool
	}{
		{"layout", "select a,\n  count(*) as n, -- how many\n  safe.parse_date('%F', b) as d\nfrom `p.d.t`\nwhere a>1\ngroup by a,b", true},
		{"comment block", "/* x */ SELECT a, COUNT(*) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.t` WHERE a > 1 GROUP BY a, b", true},
		{"constant", "SELECT a, COUNT(*) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.t` WHERE a > 2 GROUP BY a, b", false},
		{"format string", "SELECT a, COUNT(*) AS n, SAFE.PARSE_DATE('%Y', b) AS d FROM `p.d.t` WHERE a > 1 GROUP BY a, b", false},
		{"column", "SELECT c, COUNT(*) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.t` WHERE c > 1 GROUP BY c, b", false},
		{"column case", "SELECT A, COUNT(*) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.t` WHERE a > 1 GROUP BY a, b", false},
		{"alias", "SELECT a, COUNT(*) AS m, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.t` WHERE a > 1 GROUP BY a, b", false},
		{"function", "SELECT a, COUNTIF(a > 0) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.t` WHERE a > 1 GROUP BY a, b", false},
		{"table", "SELECT a, COUNT(*) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `p.d.u` WHERE a > 1 GROUP BY a, b", false},
		{"table case", "SELECT a, COUNT(*) AS n, SAFE.PARSE_DATE('%F', b) AS d FROM `P.d.t` WHERE a > 1 GROUP BY a, b", false},
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
