package source

import (
	"strings"
	"testing"
)

// Text with many unclosed /* (a half-typed file): each used to search to
// the end again, 1 s for 200 KB.
func BenchmarkScanSQLXUnclosedComments(b *testing.B) {
	src := []byte(strings.Repeat("a /*", 50_000))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		ScanSQLX(src)
	}
}
