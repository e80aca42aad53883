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
// that is safe. GoogleSQL's formatter drops comments, so the text is
// formatted without them and each comment is put back next to the token
// it followed or preceded (comments.go), byte for byte and in order. The
// formatted text has the same tokens as the original — string
// literals, numbers, quoted identifiers and operators byte for byte,
// keywords in any case — except for the few tokens the formatter spells
// out without changing meaning (AS before an alias, INTO after INSERT and
// MERGE, ARRAY before an array literal, BY TARGET in MERGE), and
// formatting it again gives it back. The result ends with a semicolon
// only when the text did: Dataform wraps a table's query in CREATE TABLE
// … AS, where one would break it. Errors are *FormatError, or the
// engine's failure to start.
func FormatSQL(text string, opts FormatOptions) (string, error) {
	out, err := formatWithComments(text, opts, true)
	if err != nil {
		return "", err
	}
	// Stable: formatting the result again gives it back. The comments'
	// placement is what this checks; the SQL's own stability is checked
	// inside.
	again, err := formatWithComments(out, opts, false) // out has text's syntax trees: checked
	if err != nil || again != out {
		return "", &FormatError{0, "formatting is not stable on this SQL (its comments move); it was left as written"}
	}
	return out, nil
}

// formatWithComments formats the text without its comments and puts them
// back (see comments.go).
func formatWithComments(text string, opts FormatOptions, checkDepth bool) (string, error) {
	if len(text) > MaxStatementBytes {
		return "", &FormatError{0, fmt.Sprintf("SQL of %s is longer than the %s dfd formats", kib(len(text)), kib(MaxStatementBytes))}
	}
	toks, err := Tokens(text)
	if err != nil {
		return "", &FormatError{0, "cannot read the SQL: " + err.Error()}
	}
	if len(toks) == 0 {
		return text, nil
	}
	cs := splitComments(text, toks)
	if len(cs.code) == 0 {
		return text, nil // comments only
	}
	formatted, ftoks, align, err := formatCode(cs.stripped, cs.code, opts, checkDepth)
	if err != nil {
		return "", err
	}
	if len(cs.comments) == 0 {
		return formatted, nil
	}
	return placeComments(text, cs, formatted, ftoks, align)
}

// formatCode formats a text without comments and aligns its tokens with
// the formatted ones: align[i] is the formatted token that is code[i].
func formatCode(text string, code []Token, opts FormatOptions, checkDepth bool) (string, []Token, []int, error) {
	formatted, err := unparse(text, checkDepth)
	if err != nil {
		return "", nil, nil, err
	}
	if last := code[len(code)-1]; text[last.Start:last.End] == ";" {
		formatted += ";"
	}
	ftoks, err := Tokens(formatted)
	if err != nil {
		return "", nil, nil, &FormatError{0, "the formatted SQL cannot be read: " + err.Error()}
	}
	align, err := alignTokens(text, code, formatted, ftoks, opts, true)
	if err != nil {
		return "", nil, nil, err
	}
	printed := formatted
	if formatted, ftoks, err = unquoteAsWritten(text, code, formatted, ftoks, align); err != nil {
		return "", nil, nil, err
	}
	// Stable: what is printed for the result is what was printed for the
	// text (the requoting undone above is redone by the printer).
	again, err := unparse(formatted, false) // the same trees as text's
	if err != nil {
		return "", nil, nil, &FormatError{0, "the formatted SQL does not parse again: " + err.Error()}
	}
	if strings.HasSuffix(formatted, ";") {
		again += ";"
	}
	if again != printed {
		return "", nil, nil, &FormatError{0, "GoogleSQL's formatter is not stable on this SQL"}
	}
	return formatted, ftoks, align, nil
}

// unquoteAsWritten spells the words GoogleSQL's printer quoted
// (`current_date`()) as the text wrote them, and returns the new text with
// its tokens (align still holds: only token texts change).
func unquoteAsWritten(text string, code []Token, formatted string, ftoks []Token, align []int) (string, []Token, error) {
	var b strings.Builder
	last, changed := 0, false
	for i, j := range align {
		if isRequoted(text, code[i], formatted, ftoks[j]) {
			b.WriteString(formatted[last:ftoks[j].Start])
			b.WriteString(text[code[i].Start:code[i].End])
			last, changed = ftoks[j].End, true
		}
	}
	if !changed {
		return formatted, ftoks, nil
	}
	b.WriteString(formatted[last:])
	out := b.String()
	toks, err := Tokens(out)
	if err != nil || len(toks) != len(ftoks) {
		return "", nil, &FormatError{0, "the formatted SQL cannot be read"}
	}
	return out, toks, nil
}

// unparse parses text as a script and prints each statement as
// GoogleSQL's Unparse does, one after the other with their separating
// semicolons (none after the last). With checkDepth it first refuses a
// statement deeper than maxUnparseDepth; FormatSQL asks once, for the
// text it was given: what it unparses after that has the same trees.
func unparse(text string, checkDepth bool) (string, error) {
	e, err := theEngine()
	if err != nil {
		return "", err
	}
	out, err := e.parse(text)
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
		if checkDepth {
			deep, err := deeperThan(st, maxUnparseDepth)
			if err != nil {
				return "", fmt.Errorf("reading statement %d: %w", i+1, err)
			}
			if deep {
				return "", &FormatError{0, fmt.Sprintf("statement %d nests more than %d levels deep, more than dfd formats: it was left as written", i+1, maxUnparseDepth)}
			}
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
	_, err := alignTokens(a, at, b, bt, opts, false)
	return err
}

// alignTokens is sameTokens, returning for each token of a the index of
// the token of b that it is.
// With requoted, a plain word of a may be a `quoted` identifier in b with
// the same text: GoogleSQL's printer quotes function names such as IF and
// CURRENT_DATE, which formatCode then spells as they were written.
func alignTokens(a string, at []Token, b string, bt []Token, opts FormatOptions, requoted bool) ([]int, error) {
	align := make([]int, len(at))
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
	mismatch := func(i int) ([]int, error) {
		if i >= len(at) {
			return nil, &FormatError{len(a), "GoogleSQL's formatter would add tokens at the end; the SQL was left as written"}
		}
		return nil, &FormatError{at[i].Start, fmt.Sprintf("GoogleSQL's formatter would change the SQL near %q; it was left as written", a[at[i].Start:at[i].End])}
	}
	i, j := 0, 0
	for i < len(at) || j < len(bt) {
		if i < len(at) && j < len(bt) && (sameToken(a, at[i], b, bt[j], opts) || requoted && isRequoted(a, at[i], b, bt[j])) {
			if opaque(a, at[i]) && at[i].Kind == Word {
				ga, oka := gapBefore(a, at, i)
				gb, okb := gapBefore(b, bt, j)
				ha, okha := gapAfter(a, at, i)
				hb, okhb := gapAfter(b, bt, j)
				if !sameGap(ga, oka, gb, okb) || !sameGap(ha, okha, hb, okhb) {
					return nil, &FormatError{at[i].Start, "formatting would change the spacing next to a ${…} placeholder; the SQL was left as written"}
				}
			}
			align[i] = j
			i, j = i+1, j+1
			continue
		}
		if j < len(bt) && insertable(b, bt, j) && !opaqueAt(b, bt, j-1) && !opaqueAt(b, bt, j+1) {
			j++
			continue
		}
		return mismatch(i)
	}
	return align, nil
}

// isRequoted: the word x of a printed as a `quoted` identifier y of b.
func isRequoted(a string, x Token, b string, y Token) bool {
	return x.Kind == Word && y.Kind == QuotedIdent && b[y.Start+1:y.End-1] == a[x.Start:x.End]
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
// orig says by FormatSQL's rules: the same code tokens up to keyword case
// and the tokens the formatter spells out, and the same comments byte for
// byte and in order (a trailing comment may have moved past a comma).
// Tests use it to compare compiled SQL before and after formatting.
func SameSQL(orig, formatted string) error {
	at, err := Tokens(orig)
	if err != nil {
		return err
	}
	bt, err := Tokens(formatted)
	if err != nil {
		return err
	}
	a, b := splitComments(orig, at), splitComments(formatted, bt)
	if err := sameTokens(orig, a.code, formatted, b.code, FormatOptions{}); err != nil {
		return err
	}
	for i, c := range a.comments {
		if i >= len(b.comments) || orig[c.tok.Start:c.tok.End] != formatted[b.comments[i].tok.Start:b.comments[i].tok.End] {
			return &FormatError{c.tok.Start, fmt.Sprintf("the comment %q is lost or changed", orig[c.tok.Start:c.tok.End])}
		}
	}
	if len(b.comments) > len(a.comments) {
		return &FormatError{len(orig), "a comment was added"}
	}
	return nil
}

// maxUnparseDepth bounds the syntax trees dfd lets GoogleSQL's formatter
// print. Unparse recurses once per level, on the WebAssembly module's own
// stack, and nothing stops it at the stack's end: formatting 10,000 nested
// subqueries wrote over GoogleSQL's heap, after which every later call into
// GoogleSQL (the SQL check, the next format, a finalizer's free) spun or
// hung, and the daemon with it. 8,000 did not, and was already 40 s of
// formatting. Hand-written SQL nests a few dozen levels; a thousand leaves
// room for long generated chains (a + b + … is one level per term).
const maxUnparseDepth = 1000

// deeperThan reports whether the syntax tree under n has more than limit
// levels. It walks the tree with a stack of its own (the point is not to
// recurse), and stops as soon as it knows.
func deeperThan(n googlesql.ASTNode, limit int) (bool, error) {
	type item struct {
		n     googlesql.ASTNode
		depth int
	}
	stack := []item{{n, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > limit {
			return true, nil
		}
		k, err := it.n.NumChildren()
		if err != nil {
			return false, err
		}
		for i := int32(0); i < k; i++ {
			c, err := it.n.Child(i)
			if err != nil {
				return false, err
			}
			if c != nil {
				stack = append(stack, item{c, it.depth + 1})
			}
		}
	}
	return false, nil
}
