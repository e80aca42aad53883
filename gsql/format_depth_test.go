package gsql

import (
	"errors"
	"strings"
	"testing"
)

// GoogleSQL's formatter recurses once per level of the syntax tree on the
// WebAssembly stack, and 10,000 nested subqueries overflowed it into
// GoogleSQL's heap: every later call into GoogleSQL hung. Trees deeper than
// maxUnparseDepth are refused with a reason, whatever makes them deep, and
// GoogleSQL works on afterwards.
func TestFormatRefusesDeepTrees(t *testing.T) {
	nested := func(n int) string {
		return "SELECT * FROM " + strings.Repeat("(SELECT * FROM ", n) + "t" + strings.Repeat(")", n)
	}
	for _, tc := range []struct {
		name, sql string
		refused   bool
	}{
		{"100 nested subqueries", nested(100), false},
		{"1,500 nested subqueries", nested(1500), true},
		{"a chain of 2,000 additions", "SELECT 1" + strings.Repeat(" + 1", 2000), true},
		{"a flat list of 5,000 columns", "SELECT " + strings.TrimSuffix(strings.Repeat("a, ", 5000), ", ") + " FROM t", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FormatSQL(tc.sql, FormatOptions{})
			var fe *FormatError
			deep := errors.As(err, &fe) && strings.Contains(fe.Reason, "levels deep")
			if deep != tc.refused {
				t.Fatalf("refused as too deep: %v, want %v (error: %v)", deep, tc.refused, err)
			}
			if !tc.refused && err != nil {
				t.Fatalf("not formatted: %v", err)
			}
		})
	}
	if out, err := FormatSQL("select a from t where b = 1", FormatOptions{}); err != nil || !strings.HasPrefix(out, "SELECT") {
		t.Fatalf("GoogleSQL after the refusals: %q, %v", out, err)
	}
}
