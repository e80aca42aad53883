package engine

import (
	"os"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

func TestTextSearchIsStrings(t *testing.T) {
	long := strings.Repeat("ab", 40)
	for _, tc := range []struct{ s, pat string }{
		{"", "x"}, {"x", "x"}, {"xx", "x"}, {"axbxc", "x"},
		{long, long}, {long + long, long}, {"c" + long + "c" + long[:len(long)-1], long},
		{strings.Repeat("a", 100), strings.Repeat("a", 40)},
		{strings.Repeat("ab", 100) + "c", strings.Repeat("ab", 30) + "c"},
		{strings.Repeat(long[:31]+"!", 5), long},
	} {
		if got, want := indexText(tc.s, tc.pat), strings.Index(tc.s, tc.pat); got != want {
			t.Errorf("indexText(%q, %q) = %d, want %d", tc.s, tc.pat, got, want)
		}
		want := -1
		if strings.Count(tc.s, tc.pat) == 1 {
			want = strings.Index(tc.s, tc.pat)
		}
		if got := indexOnce(tc.s, tc.pat); got != want {
			t.Errorf("indexOnce(%q, %q) = %d, want %d", tc.s, tc.pat, got, want)
		}
		if got, want := replaceOnce(tc.s, tc.pat, "<>"), strings.Replace(tc.s, tc.pat, "<>", 1); got != want {
			t.Errorf("replaceOnce(%q, %q) = %q, want %q", tc.s, tc.pat, got, want)
		}
	}
}

// BenchmarkPatchBundle is every rewrite of core's bundle that a cold
// compile makes before goja compiles it (compileBundleSource).
func BenchmarkPatchBundle(b *testing.B) {
	src, err := os.ReadFile(testenv.CoreDir(b, testenv.CoreVersion) + "/bundle.js")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		code, _ := patchBundle(testenv.CoreVersion, src, true)
		if _, ok := patchIncremental(code); !ok {
			b.Fatal("the incremental hooks did not apply")
		}
	}
}
