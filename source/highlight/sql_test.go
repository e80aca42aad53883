package highlight

import (
	"strings"
	"testing"
)

// punct looks at sqlOperators only after one of their first bytes.
func TestOperatorFirstBytes(t *testing.T) {
	for _, op := range sqlOperators {
		if !strings.ContainsRune("<>!|=-+", rune(op[0])) {
			t.Errorf("operator %q starts with a byte punct does not look for", op)
		}
	}
}
