package gsql

import (
	"fmt"
	"strings"

	googlesql "github.com/goccy/go-googlesql"
)

// FormatError says why a SQL text was not formatted, and where.
type FormatError struct {
	// Offset is the byte offset in the text the reason is about.
	Offset int
	Reason string
}

func (e *FormatError) Error() string { return e.Reason }

// FormatOptions tune FormatSQL.
type FormatOptions struct {
	// Opaque reports whether a word stands for text the formatter does
	// not see (a Dataform ${…} placeholder, replaced by an identifier
	// before formatting). Such a word may expand to anything, so the
	// formatter keeps whether it touches its neighbours, keeps a line
	// break next to it (the expansion may end in a -- comment), never
	// inserts a token beside it (an AS before `${alias}` would break an
	// expansion like "WHERE …") and never unquotes a `quoted` identifier
	// holding it.
	Opaque func(word string) bool
}

// FormatSQL formats a SQL text of one or more statements with GoogleSQL's
// own formatter (its Unparse of each statement), and returns it only when
// that is safe: the text has no comments (the formatter drops them), and
// the formatted text has the same tokens as the original — string
// literals, numbers, quoted identifiers and operators byte for byte,
// keywords in any case — except for the few tokens the formatter spells
// out without changing meaning (AS before an alias, INTO after INSERT and
// MERGE, ARRAY before an array literal, BY TARGET in MERGE), and
// formatting it again gives it back. The result ends with a semicolon
// only when the text did: Dataform wraps a table's query in CREATE TABLE
// … AS, where one would break it. Errors are *FormatError, or the
// engine's failure to start.
func FormatSQL(text string, opts FormatOptions) (string, error) {
	if len(text) > MaxStatementBytes {
		return "", &FormatError{0, fmt.Sprintf("SQL of %s is longer than the %s dfd formats", kib(len(text)), kib(MaxStatementBytes))}
	}
	toks, err := Tokens(text)
	if err != nil {
		return "", &FormatError{0, "cannot read the SQL: " + err.Error()}
	}
	for _, t := range toks {
		if t.Kind == Comment {
			return "", &FormatError{t.Start, "a comment inside the SQL (GoogleSQL's formatter would drop it)"}
		}
	}
	if len(toks) == 0 {
		return text, nil
	}
	formatted, err := unparse(text)
	if err != nil {
		return "", err
	}
	if last := toks[len(toks)-1]; text[last.Start:last.End] == ";" {
		formatted += ";"
	}
	ftoks, err := Tokens(formatted)
	if err != nil {
		return "", &FormatError{0, "the formatted SQL cannot be read: " + err.Error()}
	}
	if err := sameTokens(text, toks, formatted, ftoks, opts); err != nil {
		return "", err
	}
	again, err := unparse(formatted)
	if err != nil {
		return "", &FormatError{0, "the formatted SQL does not parse again: " + err.Error()}
	}
	if strings.HasSuffix(formatted, ";") {
		again += ";"
	}
	if again != formatted {
		return "", &FormatError{0, "GoogleSQL's formatter is not stable on this SQL"}
	}
	return formatted, nil
}

// unparse parses text as a script and prints each statement as
// GoogleSQL's Unparse does, one after the other with their separating
// semicolons (none after the last).
func unparse(text string) (string, error) {
	e, err := theEngine()
	if err != nil {
		return "", err
	}
	out, err := googlesql.ParseScript(text, e.parser, e.errs)
	if err != nil {
		return "", &FormatError{0, "GoogleSQL cannot parse it: " + firstLine(err.Error())}
	}
	if out == nil {
		return "", fmt.Errorf("the parser returned nothing")
	}
	script, err := out.Script()
	if err != nil || script == nil {
		return "", fmt.Errorf("reading the parsed script: %v", err)
	}
	list, err := script.StatementListNode()
	if err != nil || list == nil {
		return "", fmt.Errorf("reading the statement list: %v", err)
	}
	n, err := list.NumChildren()
	if err != nil {
		return "", fmt.Errorf("reading the statement list: %w", err)
	}
	var b strings.Builder
	prevMulti := false
	for i := int32(0); i < n; i++ {
		st, err := list.StatementList(i)
		if err != nil {
			return "", fmt.Errorf("reading statement %d: %w", i+1, err)
		}
		u, err := googlesql.Unparse(st)
		if err != nil {
			return "", fmt.Errorf("unparsing statement %d: %w", i+1, err)
		}
		u = strings.TrimRight(u, " \n")
		multi := strings.Contains(u, "\n")
		if i > 0 {
			// One-line statements (DECLARE, SET) stay together; a blank
			// line sets off the others.
			b.WriteString(";\n")
			if multi || prevMulti {
				b.WriteString("\n")
			}
		}
		b.WriteString(u)
		prevMulti = multi
	}
	return b.String(), nil
}

// sameTokens checks that the formatted text says what the original says
// (see FormatSQL) and, for opaque words, that their surroundings are kept.
func sameTokens(a string, at []Token, b string, bt []Token, opts FormatOptions) error {
	opaque := func(s string, t Token) bool {
		if opts.Opaque == nil {
			return false
		}
		switch t.Kind {
		case Word:
			return opts.Opaque(s[t.Start:t.End])
		case QuotedIdent:
			return opts.Opaque(s[t.Start+1 : t.End-1])
		}
		return false
	}
	opaqueAt := func(s string, ts []Token, k int) bool { return k >= 0 && k < len(ts) && opaque(s, ts[k]) }
	mismatch := func(i int) error {
		if i >= len(at) {
			return &FormatError{len(a), "GoogleSQL's formatter would add tokens at the end; the SQL was left as written"}
		}
		return &FormatError{at[i].Start, fmt.Sprintf("GoogleSQL's formatter would change the SQL near %q; it was left as written", a[at[i].Start:at[i].End])}
	}
	i, j := 0, 0
	for i < len(at) || j < len(bt) {
		if i < len(at) && j < len(bt) && sameToken(a, at[i], b, bt[j], opts) {
			if opaque(a, at[i]) && at[i].Kind == Word {
				ga, oka := gapBefore(a, at, i)
				gb, okb := gapBefore(b, bt, j)
				ha, okha := gapAfter(a, at, i)
				hb, okhb := gapAfter(b, bt, j)
				if !sameGap(ga, oka, gb, okb) || !sameGap(ha, okha, hb, okhb) {
					return &FormatError{at[i].Start, "formatting would change the spacing next to a ${…} placeholder; the SQL was left as written"}
				}
			}
			i, j = i+1, j+1
			continue
		}
		if j < len(bt) && insertable(b, bt, j) && !opaqueAt(b, bt, j-1) && !opaqueAt(b, bt, j+1) {
			j++
			continue
		}
		return mismatch(i)
	}
	return nil
}

// sameToken: the same token, up to keyword case and the quotes of a
// plain identifier.
func sameToken(a string, x Token, b string, y Token, opts FormatOptions) bool {
	xs, ys := a[x.Start:x.End], b[y.Start:y.End]
	if xs == ys {
		return true
	}
	switch {
	case x.Kind == Word && y.Kind == Word:
		return strings.EqualFold(xs, ys) && keywords[strings.ToUpper(xs)]
	case x.Kind == QuotedIdent && y.Kind == Word:
		// `name` printed as name: the same identifier unless the
		// content stands for text the formatter does not see.
		inner := xs[1 : len(xs)-1]
		return inner == ys && !keywords[strings.ToUpper(ys)] && (opts.Opaque == nil || !opts.Opaque(inner))
	}
	return false
}

// insertable reports whether the formatter may have spelled out the
// formatted token bt[j] where the original left it implicit.
func insertable(b string, bt []Token, j int) bool {
	word := func(k int) string {
		if k < 0 || k >= len(bt) {
			return ""
		}
		return strings.ToUpper(b[bt[k].Start:bt[k].End])
	}
	if bt[j].Kind != Word {
		return false
	}
	switch word(j) {
	case "AS":
		return j+1 < len(bt) && (bt[j+1].Kind == Word || bt[j+1].Kind == QuotedIdent)
	case "INTO":
		return word(j-1) == "INSERT" || word(j-1) == "MERGE"
	case "ARRAY":
		return word(j+1) == "[" || word(j+1) == "<"
	case "BY":
		return word(j+1) == "TARGET" && word(j-1) == "MATCHED" && word(j-2) == "NOT"
	case "TARGET":
		return word(j-1) == "BY" && word(j-2) == "MATCHED" && word(j-3) == "NOT"
	}
	return false
}

func gapBefore(s string, ts []Token, k int) (string, bool) {
	if k == 0 {
		return "", false
	}
	return s[ts[k-1].End:ts[k].Start], true
}

func gapAfter(s string, ts []Token, k int) (string, bool) {
	if k == len(ts)-1 {
		return "", false
	}
	return s[ts[k].End:ts[k+1].Start], true
}

// sameGap: the spacing between an opaque word and its neighbour keeps
// whether there is any, and a line break where there was one. A missing
// neighbour (the text's edge) is the caller's concern.
func sameGap(orig string, okA bool, formatted string, okB bool) bool {
	if !okA || !okB {
		return okA == okB
	}
	if (orig == "") != (formatted == "") {
		return false
	}
	return !strings.Contains(orig, "\n") || strings.Contains(formatted, "\n")
}

// SameSQL reports, as an error saying where, whether formatted says what
// orig says by FormatSQL's rules: the same tokens up to keyword case and
// the tokens the formatter spells out. Tests use it to compare compiled
// SQL before and after formatting.
func SameSQL(orig, formatted string) error {
	at, err := Tokens(orig)
	if err != nil {
		return err
	}
	bt, err := Tokens(formatted)
	if err != nil {
		return err
	}
	return sameTokens(orig, at, formatted, bt, FormatOptions{})
}
