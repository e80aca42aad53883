package source

import "testing"

func TestParseUnresolved(t *testing.T) {
	for msg, want := range map[string]string{
		`Missing dependency detected: Action "db.s.a" depends on "x" which does not exist`:                         "..x",
		`Missing dependency detected: Action "db.s.a" depends on "{"name":"x","schema":"s"}" which does not exist`: ".s.x",
		`Could not resolve "x"`: "..x",
		`Could not resolve {"name":"x","schema":"s"} (action db.s.a)`: ".s.x",
		`Unexpected property "descripton"`:                            "",
	} {
		db, s, n, ok := ParseUnresolved(msg)
		got := ""
		if ok {
			got = db + "." + s + "." + n
		}
		if got != want {
			t.Errorf("%s: %q, want %q", msg, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"dim_custmers", "dim_customers", 1}, // a letter left out
		{"ab", "ba", 1},                      // a transposition counts once
		{"stg_orders", "stg_orders", 0},
		{"", "abc", 3},
		{"orders", "users", 3},
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// EditDistanceWithin gives the distance when it is within the limit, and
// limit+1 otherwise, on every pair of a set of names and for every limit.
func TestEditDistanceWithin(t *testing.T) {
	names := []string{"", "a", "ab", "ba", "abc", "orders", "users", "stg_orders", "stg_ordres", "dim_customers",
		"dim_custmers", "int_finance_accounts_enriched", "int_finance_account_enriched", "xyzzy"}
	for _, a := range names {
		for _, b := range names {
			d := EditDistance(a, b)
			for limit := 0; limit <= 12; limit++ {
				want := min(d, limit+1)
				if got := EditDistanceWithin(a, b, limit); got != want {
					t.Errorf("EditDistanceWithin(%q, %q, %d) = %d, want %d", a, b, limit, got, want)
				}
			}
		}
	}
}

// FuzzEditDistanceWithin: the shortcuts (lengths, byte counts, rows past
// the limit) never change the answer of the whole table.
func FuzzEditDistanceWithin(f *testing.F) {
	f.Add("int_finance_accounts_enriched", "int_finance_account_enriched", 3)
	f.Add("ab", "ba", 0)
	f.Add("orders", "users", 2)
	f.Fuzz(func(t *testing.T, a, b string, limit int) {
		if len(a) > 64 || len(b) > 64 || limit < 0 || limit > 64 {
			t.Skip()
		}
		want := min(EditDistance(a, b), limit+1)
		if got := EditDistanceWithin(a, b, limit); got != want {
			t.Errorf("EditDistanceWithin(%q, %q, %d) = %d, want %d", a, b, limit, got, want)
		}
	})
}
