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
