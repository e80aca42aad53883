package gsql

import "testing"

// GoogleSQL's columns count characters and expand tabs to multiples of 8;
// Offset and ColumnOf convert between them and byte offsets.
func TestStatementColumns(t *testing.T) {
	for _, tc := range []struct {
		line string
		col  int // GoogleSQL's, 1-based
		off  int // bytes
	}{
		{"SELECT x", 8, 7},
		{"\tx", 9, 1},
		{"ab\tx", 9, 3},
		{"abcdefgh\tx", 17, 9},
		{"'ö→🙂' x", 7, 12},
	} {
		if got := Offset("first line\n"+tc.line, 2, tc.col); got != len("first line\n")+tc.off {
			t.Errorf("Offset(%q, col %d) = %d, want %d", tc.line, tc.col, got-len("first line\n"), tc.off)
		}
		for _, eol := range []string{"\r\n", "\r"} {
			if got := Offset("first line"+eol+tc.line, 2, tc.col); got != len("first line"+eol)+tc.off {
				t.Errorf("Offset after %q: %d, want %d", eol, got-len("first line"+eol), tc.off)
			}
		}
		if got := ColumnOf(tc.line, tc.off); got != tc.col {
			t.Errorf("ColumnOf(%q, %d) = %d, want %d", tc.line, tc.off, got, tc.col)
		}
		for _, eol := range []string{"\n", "\r\n", "\r"} {
			if l, c := Position("first line"+eol+tc.line, len("first line"+eol)+tc.off); l != 2 || c != tc.col {
				t.Errorf("Position after %q: %d:%d, want 2:%d", eol, l, c, tc.col)
			}
		}
	}
}
