package daemon

import (
	"bytes"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// Mapping compilation errors to positions.
//
// Core reports an error with a fileName (root-relative), a message and a
// JavaScript stack. Positions come from three places, in this order:
//
//  1. Syntax errors end their message with "(definitions/a.js:LINE:COL)"
//     (the engine's wording). For .js files that is the position.
//  2. Otherwise the first stack frame in a project file gives LINE:COL
//     ("at sqlContextable (/root/definitions/a.sqlx:26:11(108))"). Errors
//     core attributes to "index.js" (an unresolvable ref) are moved to the
//     file of that frame.
//  3. Otherwise the message names something — a property ("Unexpected
//     property "descripton""), an action ("depends on {"name":"x"}"), a
//     ref target — and the source is searched for it: first a ref() of
//     that name, then the word itself.
//
// For .sqlx files, positions of kinds 1 and 2 are in the JavaScript core
// generated from the SQLX, not in the SQLX: source.CompileLayout rebuilds
// that code's layout and maps the position back to the SQLX line. The
// column is then refined to the name the message mentions when that name
// is on the line. With no position and no name found, a SQLX error goes
// on the config keyword, a JavaScript error on line 1.

var (
	posSuffixRE = regexp.MustCompile(`\s*\(([^()\s]+):(\d+):(\d+)\)\s*$`)
	frameRE     = regexp.MustCompile(`(?m)^\s*at (?:[^\n(]*\()?([^\s()]+?):(\d+):(\d+)(?:\(\d+\))?\)?\s*$`)
	jsonNameRE  = regexp.MustCompile(`"name"\s*:\s*"([^"]+)"`)
	jsonObjRE   = regexp.MustCompile(`\{[^{}]*\}`)
	nameREs     = []*regexp.Regexp{
		regexp.MustCompile(`(?:property|resolve|Could not resolve|named?)\s+"([^"]+)"`),
		regexp.MustCompile(`"([A-Za-z_$][\w$\-]*)"`),
		regexp.MustCompile(`'([A-Za-z_$][\w$\-]*)'`),
	}
	duplicateRE = regexp.MustCompile(`^Duplicate `)
)

// modulePrefixLen is the length of the engine's CommonJS wrapper, which
// shares a module's first line (engine/bundle.go modulePrefix).
const modulePrefixLen = len("(function (exports, require, module, __filename, __dirname) {")

type fileReader func(rel string) ([]byte, bool)

// mapErrors turns core's compilation errors into diagnostics. Errors
// about the graph are placed where each action involved says so (graph.go
// ...): a cycle on every file of the cycle, a dependency that does not
// resolve on each ref and dependencies entry naming it, an ambiguous name
// core could not attribute on the definitions that share it. What core
// says twice about one place (an unresolvable ref is both "Could not
// resolve" and "Missing dependency") is said once.
func mapErrors(root, settingsRel string, errs []*dataformpb.CompilationError, read fileReader, actions []*workspace.Action) []workspace.Diagnostic {
	var out []workspace.Diagnostic
	all := slices.Clip(actions) // (appended to below: the caller's stay as they are)
	// Core leaves actions whose names collide out of the graph; their
	// "Duplicate …" errors still say where they are.
	for _, e := range errs {
		if t := e.GetActionTarget(); t != nil && duplicateRE.MatchString(e.GetMessage()) {
			all = append(all, &workspace.Action{Target: target(t), CanonicalTarget: target(t), File: path.Clean(filepath.ToSlash(e.GetFileName()))})
		}
	}
	for _, e := range errs {
		if ds := mapGraphError(root, e, read, all); len(ds) > 0 {
			out = append(out, ds...)
			continue
		}
		out = append(out, mapError(root, settingsRel, e, read))
	}
	return dedupe(out)
}

// CompileErrorDiagnostics are core's compilation errors of a compile of
// the project at root (settingsRel its settings file) as the editor shows
// them: on their files, lines and columns (Diagnostic.Range), with the
// same messages. read returns a project file as the compile read it. dfd
// check reports compilation errors with it, so that the CLI and the
// editor agree.
func CompileErrorDiagnostics(root, settingsRel string, errs []*dataformpb.CompilationError, read func(rel string) ([]byte, bool), g *dataformpb.CompiledGraph) []workspace.Diagnostic {
	if len(errs) == 0 {
		return nil
	}
	return mapErrors(root, settingsRel, errs, read, actionsOf(g))
}

type jsPos struct{ line, col int } // 1-based, in the code that ran

func mapError(root, settingsRel string, e *dataformpb.CompilationError, read fileReader) workspace.Diagnostic {
	msg := strings.TrimSpace(e.GetMessage())
	file := path.Clean(filepath.ToSlash(e.GetFileName()))
	var pos *jsPos
	fromFrame := false

	if m := posSuffixRE.FindStringSubmatchIndex(msg); m != nil {
		f := msg[m[2]:m[3]]
		if _, ok := read(f); ok {
			l, _ := strconv.Atoi(msg[m[4]:m[5]])
			c, _ := strconv.Atoi(msg[m[6]:m[7]])
			file, pos = f, &jsPos{l, c}
			msg = strings.TrimSpace(msg[:m[0]])
		}
	}
	if pos == nil {
		frameFile, framePos := firstProjectFrame(root, e.GetStack(), file, read)
		_, fileOK := read(file)
		switch {
		case framePos != nil && (frameFile == file || !fileOK || file == "index.js"):
			file, pos, fromFrame = frameFile, framePos, true
		case !fileOK && frameFile != "":
			file = frameFile
		}
	}
	d := workspace.Diagnostic{
		Path:     filepath.Join(root, filepath.FromSlash(file)),
		Severity: workspace.SeverityError,
		Message:  msg,
		Source:   "dataform",
		EndLine:  -1,
	}
	if t := e.GetActionTarget(); t != nil && t.GetName() != "" && !strings.Contains(msg, t.GetName()) {
		d.Message += " (action " + target(t).String() + ")"
	}
	text, ok := read(file)
	if !ok {
		// Nowhere to point in the user's files: the settings file.
		d.Path = filepath.Join(root, filepath.FromSlash(settingsRel))
		if file != "" && file != "." {
			d.Message = file + ": " + d.Message
		}
		return d
	}
	m := source.NewMapper(text)
	sqlx := strings.HasSuffix(file, ".sqlx")
	own := strings.TrimSuffix(path.Base(file), path.Ext(file))
	if t := e.GetActionTarget(); t != nil && t.GetName() != "" {
		own = t.GetName()
	}
	names := candidateNames(msg, own)

	if pos != nil {
		off, ok := 0, false
		if sqlx {
			layout := source.CompileLayout(text)
			if off, ok = layout.SourceOffset(pos.line, pos.col); !ok {
				off, ok = layout.SourceLine(pos.line)
			}
		} else {
			col := pos.col
			if fromFrame && pos.line == 1 {
				col -= modulePrefixLen
			}
			off, ok = m.OffsetBytes(pos.line-1, max(col-1, 0)), true
		}
		if ok {
			if tok := unexpectedTokenRE.FindStringSubmatch(msg); tok != nil {
				off = atToken(text, off, tok[1])
			}
			line := m.LineOf(off)
			// Prefer the mentioned name when it is on that line.
			for _, n := range names {
				for _, sp := range source.FindWord(text, n) {
					if m.LineOf(sp.Start) == line {
						return withSpan(d, m, sp)
					}
				}
			}
			lineStart := m.OffsetBytes(line, 0)
			d.Line, d.Col = line, off-lineStart
			if d.Col >= len(m.LineText(line)) {
				d.Col = 0 // past the end (a missing token at end of line): the whole line
			}
			return d
		}
	}
	// No usable position: search the source for what the message names.
	var config *source.Block
	if sqlx {
		if b, ok := source.ScanSQLX(text).Config(); ok {
			config = &b
		}
	}
	inConfig := func(sp source.Span) bool { return config == nil || config.Span.Contains(sp.Start) }
	if duplicateRE.MatchString(msg) {
		// About the action itself: point at its definition.
		if !sqlx {
			re := regexp.MustCompile(`\(\s*["'\x60](` + regexp.QuoteMeta(own) + `)["'\x60]`)
			if loc := re.FindSubmatchIndex(text); loc != nil {
				return withSpan(d, m, source.Span{Start: loc[2], End: loc[3]})
			}
		}
		names = nil
	}
	refs := source.FindRefs(text)
	for _, n := range names {
		for _, r := range refs {
			if r.Name.Value == n {
				return withSpan(d, m, r.NameSpan())
			}
		}
	}
	for _, n := range names {
		key := regexp.MustCompile(`(?:^|[{,\s])["']?(` + regexp.QuoteMeta(n) + `)["']?\s*:`)
		for _, loc := range key.FindAllSubmatchIndex(text, -1) {
			if sp := (source.Span{Start: loc[2], End: loc[3]}); inConfig(sp) {
				return withSpan(d, m, sp)
			}
		}
	}
	for _, n := range names {
		spans := source.FindWord(text, n)
		for _, sp := range spans {
			if inConfig(sp) {
				return withSpan(d, m, sp)
			}
		}
		if len(spans) > 0 {
			return withSpan(d, m, spans[0])
		}
	}
	if config != nil {
		return withSpan(d, m, source.Span{Start: config.Span.Start, End: config.Span.Start + len("config")})
	}
	return d
}

// unexpectedTokenRE is a syntax error about a token: goja's "Unexpected
// token ," and V8's "Unexpected token ','".
var unexpectedTokenRE = regexp.MustCompile(`^Unexpected token '?([^'\s]+)'?(?:\s|$)`)

// atToken is where the token a syntax error is about starts, given the
// position the engine reported: that position when the token is there,
// else the token just before it (spaces between). goja reports some
// unexpected tokens at the token after them — `description: "x",,` at the
// next line's first key — where V8 reports the token itself.
func atToken(text []byte, off int, tok string) int {
	if off < 0 || off > len(text) || bytes.HasPrefix(text[off:], []byte(tok)) {
		return off
	}
	i := off
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t' || text[i-1] == '\n' || text[i-1] == '\r') {
		i--
	}
	if i >= len(tok) && bytes.Equal(text[i-len(tok):i], []byte(tok)) {
		return i - len(tok)
	}
	return off
}

func withSpan(d workspace.Diagnostic, m *source.Mapper, sp source.Span) workspace.Diagnostic {
	d.Line = m.LineOf(sp.Start)
	d.Col = sp.Start - m.OffsetBytes(d.Line, 0)
	d.EndLine = m.LineOf(sp.End)
	d.EndCol = sp.End - m.OffsetBytes(d.EndLine, 0)
	return d
}

// firstProjectFrame is the first stack frame in a file of the project
// (not core's bundle, not node_modules): preferably in want.
func firstProjectFrame(root, stack, want string, read fileReader) (string, *jsPos) {
	var firstFile string
	var firstPos *jsPos
	for _, m := range frameRE.FindAllStringSubmatch(stack, -1) {
		p := m[1]
		if !filepath.IsAbs(p) {
			continue
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "node_modules/") {
			continue
		}
		if _, ok := read(rel); !ok {
			continue
		}
		l, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		if rel == want {
			return rel, &jsPos{l, c}
		}
		if firstFile == "" {
			firstFile, firstPos = rel, &jsPos{l, c}
		}
	}
	return firstFile, firstPos
}

// candidateNames are the names a message mentions, most specific first,
// with the action's own name last (a circular dependency names the action
// itself; the interesting name is the next one in the chain).
func candidateNames(msg, own string) []string {
	seen := map[string]bool{}
	var out []string
	var ownSeen bool
	var found []string
	if m := ambiguousRE.FindStringSubmatch(msg); m != nil {
		if r, ok := parseResolvable(m[1]); ok {
			found = append(found, r.Name)
		}
	}
	for _, m := range jsonNameRE.FindAllStringSubmatch(msg, -1) {
		found = append(found, m[1])
	}
	// Other values of JSON targets (schema, database) name no action.
	rest := jsonObjRE.ReplaceAllString(msg, "")
	for _, re := range nameREs {
		for _, m := range re.FindAllStringSubmatch(rest, -1) {
			found = append(found, m[1])
		}
	}
	{
		for _, n := range found {
			if seen[n] || n == "name" || n == "schema" || n == "database" || n == "object" || n == "string" {
				continue
			}
			seen[n] = true
			if n == own {
				ownSeen = true
				continue
			}
			out = append(out, n)
		}
	}
	if ownSeen {
		out = append(out, own)
	}
	return out
}
