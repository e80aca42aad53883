package source

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// definitionSpanReference is how the LSP server placed definitions before:
// regular expressions compiled per call.
func definitionSpanReference(path string, text []byte, name string) (Span, bool) {
	switch {
	case strings.HasSuffix(path, ".js"):
		re := regexp.MustCompile(`\(\s*["'\x60](` + regexp.QuoteMeta(name) + `)["'\x60]`)
		if m := re.FindSubmatchIndex(text); m != nil {
			return Span{Start: m[2], End: m[3]}, true
		}
		re = regexp.MustCompile(`\bname\s*:\s*["'\x60](` + regexp.QuoteMeta(name) + `)["'\x60]`)
		if m := re.FindSubmatchIndex(text); m != nil {
			return Span{Start: m[2], End: m[3]}, true
		}
	case strings.HasSuffix(path, ".yaml"):
		re := regexp.MustCompile(`(?m)\bname:\s*["']?(` + regexp.QuoteMeta(name) + `)\b`)
		if m := re.FindSubmatchIndex(text); m != nil {
			return Span{Start: m[2], End: m[3]}, true
		}
	}
	if w := FindWord(text, name); len(w) > 0 {
		return w[0], true
	}
	return Span{}, false
}

func TestDefinitionSpanMatchesReference(t *testing.T) {
	pieces := []string{"publish", "(", ")", " ", "\n", "\"", "'", "`", "orders", "order", "orders_x", "name", "xname", ":", ",", "{", "}", "-", "é"}
	r := rand.New(rand.NewPCG(7, 8))
	for n := 0; n < 6000; n++ {
		var b strings.Builder
		for k := 1 + r.IntN(14); k > 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := []byte(b.String())
		for _, path := range []string{"definitions/a.js", "definitions/a.yaml", "definitions/a.sql"} {
			for _, name := range []string{"orders", "order"} {
				gs, gok := DefinitionSpan(path, text, name, nil)
				ws, wok := definitionSpanReference(path, text, name)
				if gs != ws || gok != wok {
					t.Fatalf("DefinitionSpan(%s, %q, %s) = %v %v, want %v %v", path, text, name, gs, gok, ws, wok)
				}
			}
		}
	}
	x := []byte("-- c\nconfig { type: \"view\" }\nSELECT 1")
	if sp, ok := DefinitionSpan("d/a.sqlx", x, "a", nil); !ok || string(x[sp.Start:sp.End]) != "config" {
		t.Errorf("sqlx: %v %v", sp, ok)
	}
}
