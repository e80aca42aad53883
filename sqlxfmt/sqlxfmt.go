// Package sqlxfmt formats the SQL of SQLX files (dfd format,
// textDocument/formatting): the query and the pre_operations and
// post_operations blocks go through GoogleSQL's formatter (gsql.FormatSQL,
// with its safety checks), while ${…} placeholders and everything that is
// not SQL (config, js, incremental_where and input blocks, --- separators)
// stay byte for byte; comments stay where they stand. What cannot be
// formatted safely — a placeholder where an identifier cannot stand, SQL
// GoogleSQL does not parse, a comment that cannot be put back — is left as
// written, with a Problem saying where and why.
package sqlxfmt

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/source"
)

// Problem is a part of a file left as written, and why.
type Problem struct {
	// Offset is the byte offset the problem is about; Line is its line
	// (1-based).
	Offset, Line int
	Message      string
}

func (p Problem) String() string { return fmt.Sprintf("%d: %s", p.Line, p.Message) }

// Result is a formatted file.
type Result struct {
	Text     []byte
	Changed  bool
	Problems []Problem
}

// Format formats a whole SQLX file.
func Format(src []byte) (Result, error) { return FormatRange(src, 0, len(src)) }

// FormatRange formats the SQL parts of a SQLX file that the byte range
// [start, end] touches. Errors are failures of the engine (GoogleSQL not
// starting); everything about the file itself is a Problem. The result is
// stable: formatting it again changes nothing (a file for which that does
// not hold is left as written).
//
// Line ends and a byte order mark are the file's own: a file whose every
// line ends in CRLF (Windows) is formatted as its LF twin and given CRLF
// back on every line, and a UTF-8 byte order mark is set aside and put
// back, so that everything formatting does not touch stays byte for byte.
// A file that mixes CRLF and LF line ends (or has a carriage return that
// ends no line) is left as written with a Problem: which end a formatted
// line should get is anyone's guess, and normalising the whole file would
// touch lines formatting does not own.
func FormatRange(src []byte, start, end int) (Result, error) {
	enc, body, problem := splitEncoding(src)
	if problem != nil {
		return Result{Text: src, Problems: []Problem{*problem}}, nil
	}
	if enc == (encoding{}) {
		return formatStable(src, start, end)
	}
	res, err := formatStable(body, enc.toBody(src, start), enc.toBody(src, end))
	if err != nil {
		return Result{Text: src}, err
	}
	for i := range res.Problems {
		res.Problems[i].Offset = enc.fromBody(body, res.Problems[i].Offset)
	}
	if !res.Changed {
		res.Text = src
		return res, nil
	}
	res.Text = enc.restore(res.Text)
	res.Changed = string(res.Text) != string(src)
	return res, nil
}

// utf8BOM is the UTF-8 byte order mark some Windows editors start files
// with; GoogleSQL would read it as SQL ("Illegal input character \357").
const utf8BOM = "\xef\xbb\xbf"

// encoding is how a file's bytes differ from the LF text without a byte
// order mark that formatting works on.
type encoding struct {
	bom  bool // the file starts with utf8BOM
	crlf bool // every line ends in CRLF
}

// splitEncoding returns src's encoding and its body (LF line ends, no byte
// order mark), or a Problem when src mixes line ends.
func splitEncoding(src []byte) (encoding, []byte, *Problem) {
	var enc encoding
	body := src
	if strings.HasPrefix(string(body), utf8BOM) {
		enc.bom, body = true, body[len(utf8BOM):]
	}
	if strings.IndexByte(string(body), '\r') < 0 {
		return enc, body, nil
	}
	// CRLF throughout: every CR is followed by LF and every LF preceded by
	// CR. Anything else is mixed; the Problem is at the first line end
	// that breaks the rule.
	for i, c := range body {
		lone := c == '\r' && (i+1 == len(body) || body[i+1] != '\n')
		bare := c == '\n' && (i == 0 || body[i-1] != '\r')
		if lone || bare {
			off := enc.offset() + i
			return enc, nil, &Problem{Offset: off, Line: lineOf(src, off),
				Message: "the file mixes line ends (CRLF and LF, or a lone carriage return); it was left as written (give every line the same end to format it)"}
		}
	}
	enc.crlf = true
	return enc, []byte(strings.ReplaceAll(string(body), "\r\n", "\n")), nil
}

// offset is the length of what precedes the body in the file.
func (e encoding) offset() int {
	if e.bom {
		return len(utf8BOM)
	}
	return 0
}

// toBody maps an offset of the file src to its body: past the byte order
// mark, one byte less for each CR before it.
func (e encoding) toBody(src []byte, off int) int {
	off = min(max(off, 0), len(src))
	b := max(off-e.offset(), 0)
	if e.crlf {
		b -= strings.Count(string(src[e.offset():e.offset()+b]), "\r")
	}
	return b
}

// fromBody maps an offset of the body back to the file.
func (e encoding) fromBody(body []byte, off int) int {
	off = min(max(off, 0), len(body))
	o := off + e.offset()
	if e.crlf {
		o += strings.Count(string(body[:off]), "\n")
	}
	return o
}

// restore gives formatted body text the file's encoding back.
func (e encoding) restore(text []byte) []byte {
	out := string(text)
	if e.crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	if e.bom {
		out = utf8BOM + out
	}
	return []byte(out)
}

// formatStable is FormatRange on a body: LF line ends, no byte order mark.
func formatStable(src []byte, start, end int) (Result, error) {
	res, err := formatOnce(src, start, end)
	if err != nil || !res.Changed {
		return res, err
	}
	// Stable: formatting the result again changes nothing. For a range,
	// the regions it formatted are stable exactly when formatting the
	// whole result gives what formatting the whole original gives.
	again, err := formatOnce(res.Text, 0, len(res.Text))
	if err != nil {
		return Result{Text: src}, err
	}
	want := res
	if start > 0 || end < len(src) {
		if want, err = formatOnce(src, 0, len(src)); err != nil {
			return Result{Text: src}, err
		}
	}
	if string(again.Text) != string(want.Text) {
		return Result{Text: src, Problems: append(res.Problems, Problem{Line: 1, Message: "formatting is not stable on this file; it was left as written"})}, nil
	}
	return res, nil
}

func formatOnce(src []byte, start, end int) (Result, error) {
	res := Result{Text: src}
	problem := func(off int, msg string) {
		res.Problems = append(res.Problems, Problem{Offset: off, Line: lineOf(src, off), Message: msg})
	}
	if !utf8.Valid(src) {
		off := 0
		for off < len(src) {
			r, n := utf8.DecodeRune(src[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		problem(off, "the file is not valid UTF-8; it was left as written")
		return res, nil
	}
	x := source.ScanSQLX(src)
	for _, b := range x.Blocks {
		if !b.Closed {
			problem(b.Span.Start, fmt.Sprintf("the %s block is never closed; the file was left as written", b.Kind))
			return res, nil
		}
	}
	for _, p := range x.Placeholders {
		if src[p.End-1] != '}' || p.End-p.Start < 3 {
			problem(p.Start, "a ${ is never closed; the file was left as written")
			return res, nil
		}
	}
	regions := sqlRegions(x, len(src))
	shadowed := shadowsBuiltins(src, x)
	out := make([]byte, 0, len(src)+len(src)/4)
	last := 0
	for _, r := range regions {
		if r.End < start || r.Start > end {
			continue
		}
		text, err := formatRegion(src, x, r, shadowed, problem)
		if err != nil {
			return Result{Text: src}, err
		}
		out = append(out, src[last:r.Start]...)
		out = append(out, text...)
		last = r.End
	}
	out = append(out, src[last:]...)
	if string(out) == string(src) {
		return res, nil
	}
	if err := sameStructure(src, x, out); err != nil {
		problem(0, "formatting would change the file's structure ("+err.Error()+"); it was left as written")
		return res, nil
	}
	res.Text, res.Changed = out, true
	return res, nil
}

// region is a run of SQL between blocks and separators: [Start, End) of
// the file; block is true inside a pre_operations or post_operations
// block (whose SQL is indented).
type region struct {
	source.Span
	block bool
}

// sqlRegions are the SQL parts formatting touches: the top level outside
// blocks, and the bodies of pre_operations and post_operations, each cut
// at its --- separators (which stay where they are).
func sqlRegions(x *source.SQLX, n int) []region {
	var out []region
	cut := func(sp source.Span, block int, inBlock bool) {
		at := sp.Start
		for _, s := range x.Separators {
			if s.Block == block && s.Span.Start >= sp.Start && s.Span.End <= sp.End {
				out = append(out, region{source.Span{Start: at, End: s.Span.Start}, inBlock})
				at = s.Span.End
			}
		}
		out = append(out, region{source.Span{Start: at, End: sp.End}, inBlock})
	}
	at := 0
	for i, b := range x.Blocks {
		cut(source.Span{Start: at, End: b.Span.Start}, -1, false)
		if b.Kind == source.PreOperationsBlock || b.Kind == source.PostOperationsBlock {
			cut(b.Body, i, true)
		}
		at = b.Span.End
	}
	cut(source.Span{Start: at, End: n}, -1, false)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

const (
	phPrefix  = "__dfd_ph_"
	tblPrefix = "__dfd_tbl_"
)

// placeholderName is the identifier that stands for the k-th placeholder
// of a region. Inside a `quoted identifier` it has spaces, so that the
// formatter keeps the quotes (it unquotes what would be a plain name).
func placeholderName(k int, quoted bool) string {
	if quoted {
		return "__dfd ph " + strconv.Itoa(k) + "__"
	}
	return phPrefix + strconv.Itoa(k) + "__"
}

// tableName is the identifier that stands for the k-th placeholder of a
// region when the placeholder is a table reference (see isTableRef): it
// expands to one `quoted` table name, so the formatter may treat it as the
// identifier it is — put AS after it, move it to its own line.
func tableName(k int) string { return tblPrefix + strconv.Itoa(k) + "__" }

// isPlaceholderWord reports the words the formatter must treat as opaque:
// those holding a placeholder, except a table reference standing alone.
func isPlaceholderWord(w string) bool {
	if strings.Contains(w, phPrefix) || strings.Contains(w, "__dfd ph ") {
		return true
	}
	return strings.Contains(w, tblPrefix) && !(strings.HasPrefix(w, tblPrefix) && strings.HasSuffix(w, "__") &&
		strings.Count(w, tblPrefix) == 1 && isDigits(w[len(tblPrefix):len(w)-2]))
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// formatRegion returns the formatted text of one region, or the region as
// written (with a problem) when it cannot be formatted safely. shadowed:
// the file's js blocks declare ref, resolve or self (shadowsBuiltins).
func formatRegion(src []byte, x *source.SQLX, r region, shadowed bool, problem func(int, string)) (string, error) {
	orig := string(src[r.Start:r.End])
	if strings.Contains(orig, phPrefix) || strings.Contains(orig, "__dfd ph ") || strings.Contains(orig, tblPrefix) {
		problem(r.Start, "the SQL contains dfd's placeholder names; it was left as written")
		return orig, nil
	}
	var phs []source.Span
	for _, p := range x.Placeholders {
		if p.Start >= r.Start && p.End <= r.End {
			phs = append(phs, p)
		}
	}
	// Substitute each placeholder, first with the plain name to find which
	// ones stand inside quoted identifiers, then for good.
	subst := func(quoted map[int]bool) (string, map[string]string) {
		var b strings.Builder
		names := map[string]string{}
		at := r.Start
		for k, p := range phs {
			b.Write(src[at:p.Start])
			name := placeholderName(k, quoted[k])
			if quoted != nil && !quoted[k] && !shadowed && isTableRef(string(src[p.Start:p.End])) {
				name = tableName(k)
			}
			names[name] = string(src[p.Start:p.End])
			b.WriteString(name)
			at = p.End
		}
		b.Write(src[at:r.End])
		return b.String(), names
	}
	text, _ := subst(nil)
	toks, err := gsql.Tokens(text)
	if err != nil {
		problem(r.Start, "cannot read the SQL ("+err.Error()+"); it was left as written")
		return orig, nil
	}
	quoted := map[int]bool{}
	for _, t := range toks {
		if t.Kind != gsql.QuotedIdent {
			continue
		}
		for k := range phs {
			if strings.Contains(text[t.Start:t.End], placeholderName(k, false)) {
				quoted[k] = true
			}
		}
	}
	text, names := subst(quoted)
	if toks, err = gsql.Tokens(text); err != nil {
		problem(r.Start, "cannot read the SQL ("+err.Error()+"); it was left as written")
		return orig, nil
	}
	code := false
	for _, t := range toks {
		code = code || t.Kind != gsql.Comment
	}
	if !code {
		return orig, nil // whitespace and comments only
	}
	// The comments go through the formatter too (it keeps them where
	// they stand), so that those before the SQL of a block are indented
	// with it.
	from, to := toks[0].Start, toks[len(toks)-1].End
	core, lead, trail := text[from:to], text[:from], text[to:]
	formatted, err := gsql.FormatSQL(core, gsql.FormatOptions{Opaque: isPlaceholderWord})
	if err != nil {
		var fe *gsql.FormatError
		if !errors.As(err, &fe) {
			return "", fmt.Errorf("formatting SQL: %w", err)
		}
		problem(origOffset(r.Start+from+fe.Offset, text, r.Start, phs, names), fe.Reason)
		return orig, nil
	}
	if r.block {
		formatted = indent(formatted, "  ")
		lead = strings.TrimRight(lead, " \t")
		if !strings.HasSuffix(lead, "\n") {
			lead += "\n"
		}
		trail = strings.TrimRight(trail, " \t")
		if !strings.HasSuffix(trail, "\n") {
			trail += "\n"
		}
	} else {
		// The query starts its line, unindented.
		if i := strings.LastIndexByte(lead, '\n'); i >= 0 && strings.TrimLeft(lead[i+1:], " \t") == "" {
			lead = lead[:i+1]
		}
	}
	outText := lead + formatted + trail
	for name, ph := range names {
		if strings.Count(outText, name) != 1 {
			problem(r.Start, "formatting would lose or repeat a ${…} placeholder; the SQL was left as written")
			return orig, nil
		}
		outText = strings.Replace(outText, name, ph, 1)
	}
	return outText, nil
}

// origOffset maps an offset of the substituted text (absolute: region
// start plus offset) back to the file. Placeholders before it shift it by
// the difference of their lengths.
func origOffset(abs int, text string, regionStart int, phs []source.Span, names map[string]string) int {
	rel := abs - regionStart
	shift := 0
	at := 0
	for k, p := range phs {
		name := placeholderName(k, false)
		for _, n := range []string{tableName(k), placeholderName(k, true)} {
			if _, ok := names[n]; ok {
				name = n
			}
		}
		i := strings.Index(text[at:], name)
		if i < 0 || at+i >= rel {
			break
		}
		shift += (p.End - p.Start) - len(name)
		at += i + len(name)
	}
	return abs + shift
}

// indent puts prefix before every line of a formatted SQL text, except
// lines that start inside a multi-line string literal (whose text must
// not change).
func indent(s, prefix string) string {
	toks, _ := gsql.Tokens(s)
	inside := func(off int) bool {
		for _, t := range toks {
			if off > t.Start && off < t.End {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	lineStart := true
	for i := 0; i < len(s); i++ {
		if lineStart && s[i] != '\n' && !inside(i) {
			b.WriteString(prefix)
		}
		b.WriteByte(s[i])
		lineStart = s[i] == '\n'
	}
	return b.String()
}

// sameStructure checks that the formatted file has the blocks of the
// original, with config, js, incremental_where and input blocks byte for
// byte, and the same placeholders in the same order.
func sameStructure(src []byte, x *source.SQLX, out []byte) error {
	y := source.ScanSQLX(out)
	if len(x.Blocks) != len(y.Blocks) || len(x.Placeholders) != len(y.Placeholders) || len(x.Separators) != len(y.Separators) {
		return errors.New("blocks, placeholders or separators differ")
	}
	for i, b := range x.Blocks {
		c := y.Blocks[i]
		if b.Kind != c.Kind || b.Closed != c.Closed {
			return fmt.Errorf("block %d differs", i+1)
		}
		if b.Kind != source.PreOperationsBlock && b.Kind != source.PostOperationsBlock &&
			string(src[b.Span.Start:b.Span.End]) != string(out[c.Span.Start:c.Span.End]) {
			return fmt.Errorf("the %s block differs", b.Kind)
		}
	}
	for i, p := range x.Placeholders {
		q := y.Placeholders[i]
		if string(src[p.Start:p.End]) != string(out[q.Start:q.End]) {
			return fmt.Errorf("placeholder %d differs", i+1)
		}
	}
	return nil
}

func lineOf(src []byte, off int) int {
	if off > len(src) {
		off = len(src)
	}
	return strings.Count(string(src[:off]), "\n") + 1
}

// isTableRef reports whether a ${…} placeholder is one call of ref,
// resolve or self (also as ctx.…): core expands it to one `quoted` table
// name whatever its arguments.
func isTableRef(ph string) bool {
	expr := strings.TrimSpace(ph[2 : len(ph)-1])
	expr = strings.TrimPrefix(expr, "ctx.")
	var name string
	for _, f := range []string{"ref", "resolve", "self"} {
		if strings.HasPrefix(expr, f) {
			name = f
		}
	}
	if name == "" {
		return false
	}
	rest := strings.TrimLeft(expr[len(name):], " \t")
	if !strings.HasPrefix(rest, "(") {
		return false
	}
	end := closingParen(rest)
	return end == len(rest)-1
}

// closingParen is the offset of the parenthesis that closes the one s
// starts with, skipping JavaScript strings and template literals; -1 when
// there is none.
func closingParen(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				if c != ')' {
					return -1
				}
				return i
			}
		case '"', '\'', '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				} else if c == '`' && s[j] == '$' && j+1 < len(s) && s[j+1] == '{' {
					return -1 // a template with substitutions: not worth reading
				}
				j++
			}
			if j >= len(s) {
				return -1
			}
			i = j
		case '/':
			if i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '*') {
				return -1 // comments: not worth reading
			}
		}
	}
	return -1
}

// shadowsBuiltins reports whether the file's js blocks declare a name
// ref, resolve or self, which would make a ${ref(…)} anything.
func shadowsBuiltins(src []byte, x *source.SQLX) bool {
	for _, b := range x.Blocks {
		if b.Kind != source.JSBlock {
			continue
		}
		body := string(src[b.Body.Start:b.Body.End])
		for _, f := range []string{"ref", "resolve", "self"} {
			for _, decl := range []string{"const ", "let ", "var ", "function "} {
				if strings.Contains(body, decl+f) {
					return true
				}
			}
		}
	}
	return false
}
