package source

import (
	"regexp"
	"strings"
)

// BlockKind is the kind of a top-level SQLX block.
type BlockKind int

const (
	ConfigBlock BlockKind = iota
	JSBlock
	PreOperationsBlock
	PostOperationsBlock
	IncrementalWhereBlock
	InputBlock
)

func (k BlockKind) String() string {
	return [...]string{"config", "js", "pre_operations", "post_operations", "incremental_where", "input"}[k]
}

// Span is a byte range [Start, End) of a file.
type Span struct{ Start, End int }

// Contains reports whether offset lies in [Start, End].
func (s Span) Contains(offset int) bool { return offset >= s.Start && offset <= s.End }

// Block is a top-level block of a SQLX file: `config { … }`, `js { … }`,
// `pre_operations { … }` and so on.
type Block struct {
	Kind BlockKind
	// Span covers the block from its keyword to its closing brace (to the
	// end of the file when it is never closed).
	Span Span
	// Body is the text between the braces.
	Body   Span
	Closed bool
}

// SQLX is the block structure of a SQLX file as @dataform/core's lexer
// sees it.
type SQLX struct {
	Blocks []Block
	// Placeholders are the `${ … }` JavaScript expressions inside SQL (top
	// level and SQL blocks), from "${" to just after "}".
	Placeholders []Span
	// Separators are the `---` statement separators, with the block index
	// they are in (-1: top level).
	Separators []Separator
}

// Separator is a `---` statement separator.
type Separator struct {
	Span  Span
	Block int
}

// Config returns the last config block (the one core uses), if any.
func (x *SQLX) Config() (Block, bool) {
	for i := len(x.Blocks) - 1; i >= 0; i-- {
		if x.Blocks[i].Kind == ConfigBlock {
			return x.Blocks[i], true
		}
	}
	return Block{}, false
}

// BlockAt returns the top-level block containing offset.
func (x *SQLX) BlockAt(offset int) (Block, bool) {
	for _, b := range x.Blocks {
		if offset > b.Span.Start && (offset < b.Span.End || !b.Closed && offset == b.Span.End) {
			return b, true
		}
	}
	return Block{}, false
}

// InJavaScript reports whether offset is in JavaScript: a config or js
// block, or a ${} placeholder.
func (x *SQLX) InJavaScript(offset int) bool {
	if b, ok := x.BlockAt(offset); ok && (b.Kind == ConfigBlock || b.Kind == JSBlock) {
		return true
	}
	for _, p := range x.Placeholders {
		if offset > p.Start+1 && offset < p.End {
			return true
		}
	}
	return false
}

// The lexer states of core's SQLX lexer (core/sqlx/lexer.ts, as bundled in
// @dataform/core 3.x). The rules below are its moo rules, in its order:
// moo tries them in order at each position, first match wins.
type lexState int

const (
	stSQL      lexState = iota // top level
	stJS                       // config/js blocks and ${} placeholders
	stTemplate                 // a JS template string
	stSQLBlock                 // pre_operations, post_operations, incremental_where, input
	stSingle                   // 'SQL string'
	stDouble                   // "SQL string"
	stTripleSingle
	stTripleDouble
)

var inputRE = regexp.MustCompile(`^input "[a-zA-Z0-9_-]+"(?:,\s*"[a-zA-Z0-9_-]+")* \{`)

// starts are, per lexer state, the bytes at which one of its rules can
// match. At any other byte every rule fails and the lexer moves on by one,
// so ScanSQLX skips such bytes in a tight loop: a 2 MB file lexes in
// milliseconds instead of a third of a second.
var starts = func() (t [stTripleDouble + 1][256]bool) {
	set := func(st lexState, bytes string) {
		for i := 0; i < len(bytes); i++ {
			t[st][bytes[i]] = true
		}
	}
	// A separator's leading blanks are found from its first '-' (see
	// separatorBefore), so blanks are not starts.
	const sqlCommon = "-/$`'\""
	set(stSQL, "cjip"+sqlCommon) // config, js, incremental_where/input, pre_/post_operations
	set(stSQLBlock, "}"+sqlCommon)
	set(stJS, "/'\"`{}")
	set(stTemplate, "\\$`")
	set(stSingle, "\\$'")
	set(stDouble, "\\\"")
	set(stTripleSingle, "\\$'")
	set(stTripleDouble, "\\$\"")
	return t
}()

// closings are the closing quotes of the SQL string states.
var closings = [...]string{stSingle: "'", stDouble: `"`, stTripleSingle: "'''", stTripleDouble: `"""`}

// separatorAt matches `^[^\S\r\n]*---[^\S\r\n]*(?:\r?\n|$)` at s[i:] (RE2's
// \s is [\t\n\f\r ], so the blanks are tab, form feed and space) and
// returns where the separator ends, before its line break.
func separatorAt(s string, i int) (int, bool) {
	blank := func(j int) int {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\f') {
			j++
		}
		return j
	}
	j := blank(i)
	if !strings.HasPrefix(s[j:], "---") {
		return 0, false
	}
	j = blank(j + 3)
	if j == len(s) || s[j] == '\n' || s[j] == '\r' && j+1 < len(s) && s[j+1] == '\n' {
		return j, true
	}
	return 0, false
}

// separatorBefore is where a separator whose "---" starts at s[i] begins:
// at the first of the blanks (tab, form feed, space) right before it. The
// lexer, reading byte by byte, would have matched the separator rule at
// that first blank: no token ends in a blank, so the blanks were read one
// by one in the same state.
func separatorBefore(s string, i int) int {
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\f') {
		i--
	}
	return i
}

// jsStringAt matches the one-line JavaScript string literal that the quote
// s[i] opens (`^'(?:\\['\\]|[^\n'\\])*'`, and its double-quoted twin): its
// end, or false when the line ends first or a backslash escapes anything
// but the quote or a backslash.
func jsStringAt(s string, i int) (int, bool) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == q:
			return j + 1, true
		case c == '\\':
			if j+1 < len(s) && (s[j+1] == q || s[j+1] == '\\') {
				j++
				continue
			}
			return 0, false
		case c == '\n':
			return 0, false
		}
	}
	return 0, false
}

type frame struct {
	state lexState
	// what to record when the frame pops
	block       int // index into Blocks, or -1
	placeholder int // index into Placeholders, or -1
}

// ScanSQLX splits a SQLX file into its blocks the way core's lexer does.
// It never fails: unterminated constructs run to the end of the file, as
// they do in core (which then reports a syntax error).
func ScanSQLX(src []byte) *SQLX {
	x := &SQLX{}
	s := string(src)
	stack := []frame{{state: stSQL, block: -1, placeholder: -1}}
	push := func(st lexState, block, ph int) {
		stack = append(stack, frame{state: st, block: block, placeholder: ph})
	}
	pop := func(end int) {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.block >= 0 {
			b := &x.Blocks[f.block]
			b.Span.End = end
			b.Body.End = end - 1
			b.Closed = true
		}
		if f.placeholder >= 0 {
			x.Placeholders[f.placeholder].End = end
		}
	}
	// currentBlock is the top-level block being lexed, for separators.
	currentBlock := func() int {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].block >= 0 {
				return stack[i].block
			}
		}
		return -1
	}
	startBlock := func(kind BlockKind, at, bodyStart int, st lexState) {
		x.Blocks = append(x.Blocks, Block{Kind: kind, Span: Span{at, len(s)}, Body: Span{bodyStart, len(s)}})
		push(st, len(x.Blocks)-1, -1)
	}
	startPlaceholder := func(at int) {
		x.Placeholders = append(x.Placeholders, Span{at, len(s)})
		push(stJS, -1, len(x.Placeholders)-1)
	}
	lineRest := func(i int) int { // end of the line starting the search at i
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(s)
	}
	// noClose: no "*/" from here on, as a failed search found. Without it
	// every unclosed /* searched to the end again: quadratic on text with
	// many of them.
	noClose := len(s) + 1
	blockComment := func(i int) (int, bool) {
		if i+2 >= noClose {
			return 0, false
		}
		if j := strings.Index(s[i+2:], "*/"); j >= 0 {
			return i + 2 + j + 2, true
		}
		noClose = i + 2
		return 0, false
	}
	// sqlRules are shared by the top level and SQL blocks.
	sqlCommon := func(i int) (next int, handled bool) {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "--"):
			return lineRest(i), true
		case strings.HasPrefix(rest, "/*"):
			if end, ok := blockComment(i); ok {
				return end, true
			}
			return i + 1, true
		case strings.HasPrefix(rest, "${"):
			startPlaceholder(i)
			return i + 2, true
		case rest[0] == '`':
			return i + 1, true
		case strings.HasPrefix(rest, "'''"):
			push(stTripleSingle, -1, -1)
			return i + 3, true
		case strings.HasPrefix(rest, `"""`):
			push(stTripleDouble, -1, -1)
			return i + 3, true
		case rest[0] == '\'':
			push(stSingle, -1, -1)
			return i + 1, true
		case rest[0] == '"':
			push(stDouble, -1, -1)
			return i + 1, true
		}
		return i, false
	}
	separator := func(i int) (int, bool) {
		// moo's $ is multiline: the separator must end its line. It can
		// only start a token where the previous token ended, which for
		// leading blanks is the line start or after other text.
		if s[i] != '-' {
			return 0, false
		}
		end, ok := separatorAt(s, i)
		if !ok {
			return 0, false
		}
		x.Separators = append(x.Separators, Separator{Span: Span{separatorBefore(s, i), end}, Block: currentBlock()})
		return end, true
	}

	for i := 0; i < len(s); {
		top := stack[len(stack)-1].state
		for skip := &starts[top]; i < len(s) && !skip[s[i]]; i++ {
		}
		if i == len(s) {
			break
		}
		rest := s[i:]
		switch top {
		case stSQL:
			switch c := rest[0]; {
			case c != 'c' && c != 'j' && c != 'i' && c != 'p':
			case strings.HasPrefix(rest, "config {"):
				startBlock(ConfigBlock, i, i+len("config {"), stJS)
				i += len("config {")
				continue
			case strings.HasPrefix(rest, "js {"):
				startBlock(JSBlock, i, i+len("js {"), stJS)
				i += len("js {")
				continue
			case strings.HasPrefix(rest, "incremental_where {"):
				startBlock(IncrementalWhereBlock, i, i+len("incremental_where {"), stSQLBlock)
				i += len("incremental_where {")
				continue
			case strings.HasPrefix(rest, "pre_operations {"):
				startBlock(PreOperationsBlock, i, i+len("pre_operations {"), stSQLBlock)
				i += len("pre_operations {")
				continue
			case strings.HasPrefix(rest, "post_operations {"):
				startBlock(PostOperationsBlock, i, i+len("post_operations {"), stSQLBlock)
				i += len("post_operations {")
				continue
			}
			if strings.HasPrefix(rest, `input "`) {
				if m := inputRE.FindString(rest); m != "" {
					startBlock(InputBlock, i, i+len(m), stSQLBlock)
					i += len(m)
					continue
				}
			}
			if end, ok := separator(i); ok {
				i = end
				continue
			}
			if next, ok := sqlCommon(i); ok {
				i = next
				continue
			}
			i++
		case stSQLBlock:
			if end, ok := separator(i); ok {
				i = end
				continue
			}
			if strings.HasPrefix(rest, "--") || strings.HasPrefix(rest, "/*") || strings.HasPrefix(rest, "${") {
				i, _ = sqlCommon(i)
				continue
			}
			if rest[0] == '}' {
				pop(i + 1)
				i++
				continue
			}
			if next, ok := sqlCommon(i); ok {
				i = next
				continue
			}
			i++
		case stJS:
			switch {
			case strings.HasPrefix(rest, "//"):
				i = lineRest(i)
			case strings.HasPrefix(rest, "/*"):
				if end, ok := blockComment(i); ok {
					i = end
				} else {
					i++
				}
			case rest[0] == '\'' || rest[0] == '"':
				if end, ok := jsStringAt(s, i); ok {
					i = end
				} else {
					i++
				}
			case rest[0] == '`':
				push(stTemplate, -1, -1)
				i++
			case rest[0] == '{':
				push(stJS, -1, -1)
				i++
			case rest[0] == '}':
				pop(i + 1)
				i++
			default:
				i++
			}
		case stTemplate:
			switch {
			case strings.HasPrefix(rest, `\\`):
				i += 2
			case strings.HasPrefix(rest, `\${`):
				i += 3
			case strings.HasPrefix(rest, "${"):
				push(stJS, -1, -1)
				i += 2
			case rest[0] == '`':
				pop(i + 1)
				i++
			default:
				i++
			}
		case stSingle, stDouble, stTripleSingle, stTripleDouble:
			closing := closings[top]
			switch {
			case strings.HasPrefix(rest, `\\`):
				i += 2
			case top == stSingle && strings.HasPrefix(rest, `\'`), top == stDouble && strings.HasPrefix(rest, `\"`):
				i += 2
			// core's lexer forgets the placeholder rule in double-quoted
			// strings (it is assigned to the single-quote state twice).
			case top != stDouble && strings.HasPrefix(rest, "${"):
				startPlaceholder(i)
				i += 2
			case strings.HasPrefix(rest, closing):
				pop(i + len(closing))
				i += len(closing)
			default:
				i++
			}
		}
	}
	return x
}
