package source

import (
	"regexp"
	"strings"
)

// declareRE matches `DECLARE a[, b …] [type] [DEFAULT …]` up to the
// statement's end: the names, then what follows them.
var (
	declareRE = regexp.MustCompile(`(?is)\bDECLARE\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\b([^;]*)`)
	nameRE    = regexp.MustCompile(`[A-Za-z_]\w*`)
)

// Variable is a script variable a SQLX file's pre_operations DECLARE.
type Variable struct {
	Name string
	// Type is the declared type as written ("" when only a default gives
	// it).
	Type string
	Span Span // the name in the file
}

// DeclaredVariables are the variables the pre_operations blocks of a SQLX
// file DECLARE, which its query can use by name: BigQuery runs the
// pre_operations, the query and the post_operations as one script.
func DeclaredVariables(x *SQLX, text []byte) []Variable {
	var out []Variable
	for _, b := range x.Blocks {
		if b.Kind != PreOperationsBlock || b.Body.End > len(text) {
			continue
		}
		body := text[b.Body.Start:b.Body.End]
		for _, m := range declareRE.FindAllSubmatchIndex(body, -1) {
			rest := strings.TrimSpace(string(body[m[4]:m[5]]))
			typ := ""
			if !strings.HasPrefix(strings.ToUpper(rest), "DEFAULT") {
				typ = rest
				if i := strings.Index(strings.ToUpper(rest), " DEFAULT"); i >= 0 {
					typ = strings.TrimSpace(rest[:i])
				}
			}
			names := body[m[2]:m[3]]
			for _, nm := range nameRE.FindAllIndex(names, -1) {
				start := b.Body.Start + m[2] + nm[0]
				out = append(out, Variable{Name: string(names[nm[0]:nm[1]]), Type: typ, Span: Span{start, start + nm[1] - nm[0]}})
			}
		}
	}
	return out
}
