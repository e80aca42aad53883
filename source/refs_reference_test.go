package source

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var refCallReferenceRE = regexp.MustCompile(`(?:^|[^\w$])((?:[A-Za-z_$][\w$]*\.)?(ref|resolve))\s*\(`)

// refCalleesReference is what refCallees must find: the regular
// expression FindRefs ran over the whole text before.
func refCalleesReference(s string) []callee {
	var out []callee
	for _, m := range refCallReferenceRE.FindAllStringSubmatchIndex(s, -1) {
		out = append(out, callee{start: m[2], fn: m[4], fnEnd: m[5], open: m[1] - 1})
	}
	return out
}

var refPieces = []string{
	"ref", "resolve", "re", "f", "(", ")", ".", "..", "ctx.", "$.", "1x.", "_a.", "a1.", " ", "\t", "\n", "\v", "é",
	`"x"`, `'s', "y"`, "{name: \"n\"}", "x", "$", "_", ",", "${", "}",
}

// refCallees must find exactly the regular expression's matches, on random
// texts and on the repository's fixtures.
func TestRefCalleesMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		for n := 1 + r.IntN(16); n > 0; n-- {
			b.WriteString(refPieces[r.IntN(len(refPieces))])
		}
		s := b.String()
		if got, want := refCallees(s), refCalleesReference(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("refCallees(%q):\n got %+v\nwant %+v", s, got, want)
		}
	}
	files, _ := filepath.Glob("../testdata/projects/*/definitions/*")
	more, _ := filepath.Glob("../examples/*/definitions/*/*")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if got, want := refCallees(string(b)), refCalleesReference(string(b)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", f, got, want)
		}
	}
}

// stringLitReference is stringLit without its fast path for literals
// without escapes.
func stringLitReference(s string, i int) (StringArg, int, bool) {
	if i >= len(s) || !isQuote(s[i]) {
		return StringArg{}, i, false
	}
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s):
			b.WriteByte(s[j+1])
			j++
		case c == q:
			return StringArg{Value: b.String(), Span: Span{i + 1, j}}, j + 1, true
		case c == '\n' && q != '`':
			return StringArg{}, j, false
		case q == '`' && c == '$' && j+1 < len(s) && s[j+1] == '{':
			return StringArg{}, j, false
		default:
			b.WriteByte(c)
		}
	}
	return StringArg{}, len(s), false
}

var refAliasReferenceRE = regexp.MustCompile(`^\s*\}\s*(?:(?i:AS)\s+)?([A-Za-z_]\w*)`)

func refAliasReference(src []byte, end int) string {
	m := refAliasReferenceRE.FindSubmatch(src[end:min(len(src), end+256)])
	if m == nil || SQLKeywords[strings.ToLower(string(m[1]))] {
		return ""
	}
	return string(m[1])
}

func TestStringLitAndRefAliasMatchReference(t *testing.T) {
	pieces := []string{"'", `"`, "`", `\`, "\n", "${", "$", "{", "}", "a", "as", "AS", "As", " ", "\t", "x1", "_", "where", "é", ")"}
	r := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 50000; n++ {
		var b strings.Builder
		for k := 1 + r.IntN(10); k > 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		for i := 0; i < len(s); i++ {
			ga, gn, gok := stringLit(s, i)
			wa, wn, wok := stringLitReference(s, i)
			if ga != wa || gn != wn || gok != wok {
				t.Fatalf("stringLit(%q, %d) = %+v %d %v, want %+v %d %v", s, i, ga, gn, gok, wa, wn, wok)
			}
			if got, want := RefAlias([]byte(s), i), refAliasReference([]byte(s), i); got != want {
				t.Fatalf("RefAlias(%q, %d) = %q, want %q", s, i, got, want)
			}
		}
	}
}
