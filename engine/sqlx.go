package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dfdtools/dfd/internal/regfile"
)

// SQLX in Go.
//
// Core's compiler() turns a .sqlx file into JavaScript in two steps:
// SyntaxTreeNode.create(code) lexes it with moo (one state per SQLX
// context: outer SQL, js blocks, template strings, inner SQL blocks, the
// four kinds of SQL string) into a tree, and compileSqlx walks the tree
// into the action's module text. In goja both are slow: moo makes every
// character that starts nothing special a token of its own (/[\s\S]+?/),
// each a sticky regexp2 exec of the state's combined regex, a token object
// and a step of the iterator protocol (20–40 µs per byte), and the walk
// costs a dozen function calls and regex replaces per node. A 2 MB file
// took a minute; the official CLI, on V8, 11 s.
//
// Two patches of the bundle, each applied only to the exact code it
// replaces, move that work into Go:
//
//  1. The lexer (sqlxlex.go): create() takes its tokens from
//     __dfdSqlxLex(lexer, code, …) when that returns an array, and from moo
//     as before when it returns null; the tree is still built by core. The
//     Go lexer is built from the lexer's own compiled states at run time
//     (each state's rules in order, their patterns, pushes and pops) and
//     lexes with moo's semantics (first rule that matches, in order) on the
//     same UTF-16 code units. Runs of tokens that create() only appends to
//     the current node are returned as one: push() merges adjacent
//     strings, so the tree is the same. About 10× faster.
//  2. The whole SQLX branch of compile() (sqlxcompile.go): compile()
//     returns __dfdSqlxCompile(code, …) unless that is null, and runs
//     core's code otherwise. Go builds the same tree from the same tokens
//     and produces the module text as compileSqlx does. Everything that
//     would make core throw (an 'incremental_where' block of two
//     statements, a block left open at the end of the file, …) returns
//     null, so errors are always core's own. About 100× faster.
//
// Why the results are exact, and unknown cores are left alone:
//   - each patch applies only when the code it replaces is the known code:
//     moo, the SyntaxTreeNode class and the SQLX part of the compilers
//     module must have a known fingerprint (their text with minified names
//     renamed in order of first appearance: canonicalFingerprint), and
//     create() must match sqlxCreateTemplate. Every 3.0.x core in testdata
//     has the same code (under different names);
//   - at run time the lexer's states may use only literals and the ten
//     regular expressions Go implements (sqlxPatterns, with JavaScript's
//     semantics of `.`, `$` in multiline mode and \s) and no moo feature Go
//     does not implement, each state's combined regex must be the one moo
//     builds from its rules, and create()'s maps of token types must give
//     node types of core's SyntaxTreeNodeType; otherwise both natives
//     return null for the life of the runtime;
//   - input that is not a string, input where no rule matches, and trees
//     nested deeper than maxSQLXDepth return null too.
//
// TestSQLXDifferential compares compiler() of the patched bundle with the
// unpatched one in goja, for all three cores in testdata, and with core's
// compiler() in Node.js, on every fixture .sqlx file, generated projects,
// generated 2 MB files and tricky inputs; FuzzSQLX does the same on a kept
// corpus.

// sqlxCreateTemplate is SyntaxTreeNode.create as 3.x cores minify it; ⟨x⟩
// is an identifier, the same one wherever the same x appears.
const sqlxCreateTemplate = `static create(⟨e⟩){const ⟨t⟩=new ⟨P⟩(⟨j⟩.SQL);let ⟨r⟩=⟨t⟩;const ⟨n⟩=[⟨r⟩];` +
	`⟨T⟩.reset(⟨e⟩);for(const ⟨e⟩ of ⟨T⟩){` +
	`if(!⟨e⟩.type)throw new Error("Undefined token type encountered.");` +
	`if(⟨w⟩.has(⟨e⟩.type)){const ⟨u⟩=⟨w⟩.get(⟨e⟩.type);if(⟨u⟩===⟨j⟩.SQL&&⟨r⟩.type!==⟨j⟩.SQL)throw new Error("SQL syntax tree nodes may only be children of other SQL nodes.");` +
	`const ⟨i⟩=new ⟨P⟩(⟨u⟩,[⟨e⟩.value]);⟨n⟩.push(⟨i⟩),⟨r⟩.push(⟨i⟩),⟨r⟩=⟨i⟩}` +
	`else ⟨x⟩.has(⟨e⟩.type)?(⟨r⟩.push(⟨e⟩.value),⟨n⟩.pop(),⟨r⟩=⟨n⟩[⟨n⟩.length-1]):` +
	`⟨E⟩.has(⟨e⟩.type)?⟨r⟩.push(new ⟨P⟩(⟨E⟩.get(⟨e⟩.type)).push(⟨e⟩.value)):⟨r⟩.push(⟨e⟩.value)}return ⟨t⟩}`

// The loop of create() that patch 1 replaces, and what replaces it.
const (
	sqlxCreateLoop    = `⟨T⟩.reset(⟨e⟩);for(const ⟨e⟩ of ⟨T⟩){`
	sqlxCreatePatched = `const __dfdq="function"==typeof __dfdSqlxLex?__dfdSqlxLex(⟨T⟩,⟨e⟩,⟨w⟩,⟨x⟩,⟨E⟩):null;` +
		`null===__dfdq&&⟨T⟩.reset(⟨e⟩);for(const ⟨e⟩ of null===__dfdq?⟨T⟩:__dfdq){`
	// After the class is exported, patch 2 hands the lexer and the maps
	// to Go, by a function called when compile() first needs them.
	sqlxRegister = `,"function"==typeof __dfdSqlxRegister&&__dfdSqlxRegister(⟨P⟩,()=>[⟨T⟩,⟨w⟩,⟨x⟩,⟨E⟩,⟨j⟩])`
)

// The code the patches depend on, by canonicalFingerprint. Cores minify
// moo in two ways; the class and the compilers' SQLX code are the same in
// every 3.0.x core in testdata.
var (
	mooFingerprints = map[string]bool{
		"2cade1380e8b301c6a2a1b157c10518ac1c7a8930a274d85fd107412e59a108a": true, // 3.0.62
		"9a85df9b93218bc10077ada0db18b56211ba9a4e749b7346f783368917830695": true, // 3.0.52, 3.0.59
	}
	classFingerprint    = "89eb8eec0cf043b231c42c9e6d389a6132b1294cd98e5e62a7554df6d6b65a0a"
	compilerFingerprint = "8b28178ca74de1c6b54bc6b4f9b77b72b083767ad65bc1b4c00e7322151c9b61"
)

const (
	// moo: from the "use strict" before the anchor to the end marker.
	mooAnchor = `"boolean"==typeof(new RegExp).sticky`
	mooEnd    = `Function("value",`
)

var (
	placeholderRE = regexp.MustCompile(`⟨[A-Za-z]⟩`)
	sqlxCreate    = newTemplate(sqlxCreateTemplate)

	// The compilers module: from the context lines through the end of the
	// SQLX branch of compile(), and the Map of escapes.
	compilersStartRE = regexp.MustCompile(`([A-Za-z_$][\w$]*)=\["self","ref","resolve","name","when","incremental","schema","database"\]\.map\(`)
	compilersEndRE   = regexp.MustCompile(`\(([A-Za-z_$][\w$]*)\.SyntaxTreeNode\.create\(([A-Za-z_$][\w$]*)\),([A-Za-z_$][\w$]*)\);`)
	expectRE         = regexp.MustCompile(`,([A-Za-z_$][\w$]*)=\["EXPECT"\]\.map\(`)
	compileHeadRE    = regexp.MustCompile(`\.compile=function\(([A-Za-z_$][\w$]*),([A-Za-z_$][\w$]*)\)\{if\("sqlx"===([A-Za-z_$][\w$]*)\.fileExtension\(([A-Za-z_$][\w$]*)\)\)return function\(`)
	escapesRE        = regexp.MustCompile(`const ([A-Za-z_$][\w$]*)=new Map\(\[\[([A-Za-z_$][\w$]*)\.SyntaxTreeNodeType\.SQL_COMMENT,`)

	// Literals in every match of the expressions above, for findAll.
	compilersStartLit = `=["self","ref","resolve","name","when","incremental","schema","database"].map(`
	escapesLit        = `.SyntaxTreeNodeType.SQL_COMMENT,`
)

// findAll returns the matches of re (submatch indexes, at most two) that
// contain an occurrence of lit, which starts at most back bytes after the
// match and ends within window bytes of where lit starts. Searching only
// around a literal keeps bundle load fast: a regular expression without a
// literal prefix would scan the whole bundle (100+ ms).
func findAll(code string, re *regexp.Regexp, lit string, back, window int) [][]int {
	var out [][]int
	for from := 0; len(out) < 2; {
		i := indexText(code[from:], lit)
		if i < 0 {
			break
		}
		i += from
		from = i + 1
		lo, hi := max(0, i-back), min(len(code), i+window)
		for _, m := range re.FindAllStringSubmatchIndex(code[lo:hi], -1) {
			if lo+m[0] > i || lo+m[1] < i+len(lit) || len(out) > 0 && out[len(out)-1][0] == lo+m[0] {
				continue
			}
			abs := make([]int, len(m))
			for k, v := range m {
				abs[k] = v
				if v >= 0 {
					abs[k] = lo + v
				}
			}
			out = append(out, abs)
		}
	}
	return out
}

// SQLXLevel is how much of core's SQLX compile a core bundle runs in Go.
type SQLXLevel int

const (
	SQLXInCore    SQLXLevel = iota // neither patch applies: core's own code
	SQLXLexerInGo                  // patch 1: the lexer
	SQLXInGo                       // patches 1 and 2: all of it
)

// SQLXSupport is the level of the core bundle at path, from its text (it
// is not compiled); SQLXInCore when it cannot be read. It is what the
// patches will do: the lexer's states are checked only at run time, and
// every published 3.0.x core passes.
func SQLXSupport(path string) SQLXLevel {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return SQLXInCore
	}
	_, level := sqlxEdits(string(b))
	return level
}

// patchSQLX applies the patches that apply to code (see above), and says
// which those were.
func patchSQLX(code string) (string, SQLXLevel) {
	edits, level := sqlxEdits(code)
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	for k, e := range edits {
		if k > 0 && e.end > edits[k-1].start {
			return code, SQLXInCore // overlapping: cannot happen with the known code
		}
	}
	for _, e := range edits {
		code = code[:e.start] + e.text + code[e.end:]
	}
	return code, level
}

// sqlxEdits are the patches that apply to code, and what they amount to.
func sqlxEdits(code string) ([]textEdit, SQLXLevel) {
	if !knownMoo(code) {
		return nil, SQLXInCore
	}
	names, at, ok := sqlxCreate.match(code)
	if !ok {
		return nil, SQLXInCore
	}
	fill := func(s string) string {
		return placeholderRE.ReplaceAllStringFunc(s, func(ph string) string { return names[ph] })
	}
	create := code[at[0]:at[1]]
	loop := fill(sqlxCreateLoop)
	if strings.Count(create, loop) != 1 {
		return nil, SQLXInCore
	}
	edits := []textEdit{{at[0], at[1], strings.Replace(create, loop, fill(sqlxCreatePatched), 1)}}
	if more := sqlxCompileEdits(code, names, fill); more != nil {
		return append(edits, more...), SQLXInGo
	}
	return edits, SQLXLexerInGo
}

// A textEdit replaces code[start:end] with text.
type textEdit struct {
	start, end int
	text       string
}

// sqlxCompileEdits are patch 2: the registration after the class and the
// call in compile(), or none unless both are the known code.
func sqlxCompileEdits(code string, names map[string]string, fill func(string) string) []textEdit {
	P := names["⟨P⟩"]
	head := "class " + P + "{constructor("
	classStart := indexOnce(code, head)
	if classStart < 0 {
		return nil
	}
	exported := ".SyntaxTreeNode=" + P
	n := indexText(code[classStart:], exported)
	if n < 0 {
		return nil
	}
	classEnd := classStart + n + len(exported)
	if classEnd >= len(code) || !strings.ContainsRune("};,", rune(code[classEnd])) ||
		canonicalFingerprint(code[classStart:classEnd]) != classFingerprint {
		return nil
	}

	// The compilers module: one of each landmark.
	sm := findAll(code, compilersStartRE, compilersStartLit, 64, 200)
	em := findAll(code, escapesRE, escapesLit, 200, 300)
	if len(sm) != 1 || len(em) != 1 {
		return nil
	}
	start := sm[0][0]
	endm := compilersEndRE.FindStringSubmatchIndex(code[start:min(len(code), start+32<<10)])
	if endm == nil {
		return nil
	}
	region := code[start : start+endm[1]]
	escStart := em[0][0]
	escLen := strings.Index(code[escStart:], "]])")
	if escLen < 0 || escStart < start+endm[1] {
		return nil
	}
	escapes := code[escStart : escStart+escLen+len("]])")]
	if canonicalFingerprint(region+"\n"+escapes) != compilerFingerprint {
		return nil
	}
	lm := expectRE.FindStringSubmatch(region)
	hm := compileHeadRE.FindAllStringSubmatchIndex(region, 2)
	if lm == nil || len(hm) != 1 {
		return nil
	}
	h := hm[0]
	arg := func(k int) string { return region[h[2*k]:h[2*k+1]] }
	e, r, o := arg(1), arg(2), arg(3)
	a, e2, r2 := region[endm[2]:endm[3]], region[endm[4]:endm[5]], region[endm[6]:endm[7]]
	if arg(4) != r || e2 != e || r2 != r {
		return nil
	}
	s, l := region[sm[0][2]-start:sm[0][3]-start], lm[1]
	call := `return("function"==typeof __dfdSqlxCompile?__dfdSqlxCompile(` + e + `,()=>` + o + `.escapedBasename(` + r + `),` +
		s + `,` + l + `,` + a + `.SyntaxTreeNode,` + a + `.SyntaxTreeNodeType):null)??function(`
	oldHead := region[h[0]:h[1]]
	return []textEdit{
		{classEnd, classEnd, fill(sqlxRegister)},
		{start + h[0], start + h[1], strings.TrimSuffix(oldHead, "return function(") + call},
	}
}

// knownMoo reports whether the bundle holds exactly one moo, a known one.
func knownMoo(code string) bool {
	a := indexOnce(code, mooAnchor)
	if a < 0 {
		return false
	}
	start := strings.LastIndex(code[:a], `"use strict";`)
	n := indexText(code[a:], mooEnd)
	if start < 0 || a-start > 200 || n < 0 {
		return false
	}
	return mooFingerprints[canonicalFingerprint(code[start:a+n+len(mooEnd)])]
}

// canonicalFingerprint is the SHA-256 (hex) of code with every identifier
// of one or two characters that is not a property access (.x) renamed to
// #0, #1, … in order of first appearance. Minifiers give locals and
// module variables such names, differently in each build; the rest of the
// code, and which names are the same, stay.
func canonicalFingerprint(code string) string {
	word := func(c byte) bool {
		return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	ids := map[string]string{}
	var b strings.Builder
	b.Grow(len(code))
	for i := 0; i < len(code); {
		if !word(code[i]) {
			b.WriteByte(code[i])
			i++
			continue
		}
		j := i
		for j < len(code) && word(code[j]) {
			j++
		}
		w := code[i:j]
		if c := code[i]; j-i <= 2 && !(c >= '0' && c <= '9') && (i == 0 || code[i-1] != '.') {
			id, ok := ids[w]
			if !ok {
				id = "#" + strconv.Itoa(len(ids))
				ids[w] = id
			}
			b.WriteString(id)
		} else {
			b.WriteString(w)
		}
		i = j
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// A template is JavaScript text with ⟨x⟩ placeholders for identifiers.
type template struct {
	text   string
	re     *regexp.Regexp
	fields []string // the placeholder of each capture group
}

func newTemplate(text string) *template {
	t := &template{text: text}
	var re strings.Builder
	last := 0
	for _, m := range placeholderRE.FindAllStringIndex(text, -1) {
		re.WriteString(regexp.QuoteMeta(text[last:m[0]]))
		re.WriteString(`([A-Za-z_$][\w$]*)`)
		t.fields = append(t.fields, text[m[0]:m[1]])
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(text[last:]))
	t.re = regexp.MustCompile(re.String())
	return t
}

// match finds the one occurrence of the template in code, with the same
// name wherever a placeholder repeats; it returns the names and the span.
func (t *template) match(code string) (map[string]string, []int, bool) {
	lit, _, _ := strings.Cut(t.text, "⟨")
	ms := findAll(code, t.re, lit, 0, len(t.text)+64*len(t.fields))
	if len(ms) != 1 {
		return nil, nil, false
	}
	m := ms[0]
	names := map[string]string{}
	for k, ph := range t.fields {
		name := code[m[2+2*k]:m[3+2*k]]
		if prev, ok := names[ph]; ok && prev != name {
			return nil, nil, false
		}
		names[ph] = name
	}
	return names, m[:2], true
}
