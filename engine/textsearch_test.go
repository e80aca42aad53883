package engine

import (
	"os"
	"reflect"
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

// indexText is strings.Index, also where the pattern's rarest byte is
// common in the text (the fallback) and where matches overlap.
func FuzzIndexText(f *testing.F) {
	f.Add("abcabcabd", "abd")
	f.Add(strings.Repeat("e.", 200)+"eX", "e.eX")
	f.Add(strings.Repeat("e.", 200)+"e.ee", ".ee") // the fallback
	f.Add("xxQxQyQ", "xQy")
	f.Fuzz(func(t *testing.T, s, pat string) {
		if got, want := indexText(s, pat), strings.Index(s, pat); got != want {
			t.Errorf("indexText(%q, %q) = %d, strings.Index %d", s, pat, got, want)
		}
	})
}

// Each prefixedRE finds what FindAllStringSubmatchIndex finds, in every
// core's bundle and in texts built around a match taken from one.
func TestPrefixedREMatchesRegexp(t *testing.T) {
	cores := coreBundles(t)
	for name, re := range map[string]prefixedRE{
		"escapedStatements": escapedStatementsRE, "incrLoop": incrLoopRE,
		"utf8Length": utf8LengthRE, "utf8Write": utf8WriteRE,
	} {
		loc := re.FindStringIndex(cores["3.0.62"])
		if loc == nil {
			t.Fatalf("%s: not in core 3.0.62", name)
		}
		m := cores["3.0.62"][loc[0]:loc[1]]
		texts := map[string]string{
			"alone": m, "twice": m + ";" + m, "back to back": m + m + m,
			"prefix first": re.prefix + m, "prefix only": "x" + re.prefix + "y",
			"cut short": m[:len(m)-1], "in prefixes": strings.Repeat(re.prefix, 50) + m,
		}
		for v, text := range cores {
			texts["core "+v] = text
		}
		for tn, text := range texts {
			t.Run(name+"/"+tn, func(t *testing.T) {
				for _, n := range []int{-1, 1, 2} {
					if got, want := re.findAll(text, n), re.FindAllStringSubmatchIndex(text, n); !reflect.DeepEqual(got, want) {
						t.Errorf("findAll(n=%d) = %v, FindAllStringSubmatchIndex %v", n, got, want)
					}
				}
			})
		}
	}
}

// coreBundles is the bundle.js of each core the patches are tested on,
// by version.
func coreBundles(t *testing.T) map[string]string {
	cores := map[string]string{}
	for _, v := range []string{"3.0.62", "3.0.59", "3.0.52"} {
		b, err := os.ReadFile(testenv.CoreDir(t, v) + "/bundle.js")
		if err != nil {
			t.Fatal(err)
		}
		cores[v] = string(b)
	}
	return cores
}
