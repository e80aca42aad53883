package source

import (
	"regexp"
	"strings"
)

// CompletionKind says what is being typed at the cursor.
type CompletionKind int

const (
	CompleteNothing CompletionKind = iota
	// CompleteActionName: inside ref( / resolve( (or a name: field of
	// their object form, or a dependencies list).
	CompleteActionName
	// CompleteConfigKey: a key position of a config object: a SQLX config
	// block, or the config of publish/operate/assert/declare (or
	// .config(…)) in JavaScript.
	CompleteConfigKey
	// CompleteTypeValue: the value of "type:" in a config object.
	CompleteTypeValue
	// CompleteJitContext: a member of the JiT context after "jctx." (the
	// first parameter of the function given to .jitCode), or of its
	// adapter after "jctx.adapter." (Object "adapter").
	CompleteJitContext
)

// Completion describes what to complete at a cursor.
type Completion struct {
	Kind CompletionKind
	// Prefix is what was typed of the word being completed.
	Prefix string
	// Replace is the span the completion replaces (the prefix).
	Replace Span
	// Quote is the quote the user opened (0 when none: the completion
	// must add quotes).
	Quote byte
	// Object is the enclosing config object for keys ("" at the top level,
	// "bigquery", "assertions"); for CompleteJitContext "" (the context)
	// or "adapter".
	Object string
	// Schema is the schema a ref names before the name being completed
	// (ref("schema", "…") or ref({schema: "schema", name: "…"})).
	Schema string
	// Present are the keys the config object already has (other than the
	// one being typed), for CompleteConfigKey.
	Present []string
	// ActionType is the action type of the config ("table", "view",
	// "incremental", "operations", "assertion", "declaration", "test";
	// "" when unknown), for config keys and JiT context members.
	ActionType string
	// JS: the config object is a JavaScript call's (publish, operate, …),
	// not a SQLX config block.
	JS bool
}

var (
	refOpenRE    = regexp.MustCompile(`(?:^|[^\w$])(?:[A-Za-z_$][\w$]*\.)?(?:ref|resolve)\s*\(\s*(?:(["'\x60])([\w.\-]*)|([\w]*))$`)
	refSecondRE  = regexp.MustCompile(`(?:^|[^\w$])(?:[A-Za-z_$][\w$]*\.)?(?:ref|resolve)\s*\(\s*["'\x60]([\w.\-]*)["'\x60]\s*,\s*(["'\x60])([\w.\-]*)$`)
	refObjNameRE = regexp.MustCompile(`(?:ref|resolve)\s*\(\s*\{([^}]*)\bname\s*:\s*(["'])([\w.\-]*)$`)
	objSchemaRE  = regexp.MustCompile(`\b(?:schema|dataset)\s*:\s*["'\x60]([\w.\-]+)["'\x60]`)
	depsRE       = regexp.MustCompile(`\b(?:dependencies|dependencyTargets)\s*:\s*\[[^\]]*(["'])([\w.\-]*)$`)
	keyPosRE     = regexp.MustCompile(`(?:^|[{,])\s*([A-Za-z_]*)$`)
	typeValueRE  = regexp.MustCompile(`\btype\s*:\s*(["'])(\w*)$`)
	configTypeRE = regexp.MustCompile(`\btype\s*:\s*["'](\w+)["']`)
	jitCodeRE    = regexp.MustCompile(`\.\s*jitCode\s*\(\s*(?:async\s+)?(?:function\s*[\w$]*\s*)?\(?\s*([A-Za-z_$][\w$]*)`)
	callHeadRE   = regexp.MustCompile(`(?:^|[^\w$.])(publish|operate|assert|declare|test)\s*\(`)
)

// CompletionAt analyses the text before offset. x is the file's SQLX
// structure (ScanSQLX) for a .sqlx file, nil for JavaScript; SQLX config
// blocks are completed in SQLX files, JavaScript calls' configs and the
// JiT context in JavaScript files.
func CompletionAt(src []byte, offset int, x *SQLX) Completion {
	offset = min(max(offset, 0), len(src))
	start := max(0, offset-400)
	before := string(src[start:offset])

	if m := refObjNameRE.FindStringSubmatch(before); m != nil {
		c := Completion{Kind: CompleteActionName, Prefix: m[3], Quote: m[2][0], Replace: Span{offset - len(m[3]), offset}}
		if sm := objSchemaRE.FindStringSubmatch(m[1]); sm != nil {
			c.Schema = sm[1]
		}
		return c
	}
	if m := refSecondRE.FindStringSubmatch(before); m != nil {
		return Completion{Kind: CompleteActionName, Schema: m[1], Prefix: m[3], Quote: m[2][0], Replace: Span{offset - len(m[3]), offset}}
	}
	if m := refOpenRE.FindStringSubmatch(before); m != nil {
		if m[1] != "" {
			return Completion{Kind: CompleteActionName, Prefix: m[2], Quote: m[1][0], Replace: Span{offset - len(m[2]), offset}}
		}
		return Completion{Kind: CompleteActionName, Prefix: m[3], Replace: Span{offset - len(m[3]), offset}}
	}
	if m := depsRE.FindStringSubmatch(before); m != nil {
		return Completion{Kind: CompleteActionName, Prefix: m[2], Quote: m[1][0], Replace: Span{offset - len(m[2]), offset}}
	}
	if x == nil {
		return jsCompletionAt(string(src), offset)
	}
	b, ok := x.BlockAt(offset)
	if !ok || b.Kind != ConfigBlock || offset < b.Body.Start {
		return Completion{}
	}
	end := min(b.Body.End, len(src))
	if !b.Closed {
		end = len(src)
	}
	body := string(src[b.Body.Start:max(end, offset)])
	c := configCompletion(body, offset-b.Body.Start, -1)
	if c.Kind == CompleteNothing {
		return c
	}
	c.Replace.Start += b.Body.Start
	c.Replace.End += b.Body.Start
	if m := configTypeRE.FindStringSubmatch(body); m != nil && c.Kind == CompleteConfigKey {
		c.ActionType = m[1]
	}
	return c
}

// configCompletion completes a position off in text, where the config
// object opens at text[open] ('{'), or at the start of text when open is
// -1 (a SQLX config block's body). Spans are offsets into text.
func configCompletion(text string, off, open int) Completion {
	st := scanJS(text[:off], open+1)
	if st.inString != 0 || st.inComment {
		if st.inString == '"' || st.inString == '\'' {
			if len(st.stack) == 0 {
				if m := typeValueRE.FindStringSubmatch(text[max(0, off-200):off]); m != nil {
					return Completion{Kind: CompleteTypeValue, Prefix: m[2], Quote: m[1][0], Replace: Span{off - len(m[2]), off}}
				}
			}
		}
		return Completion{}
	}
	object := ""
	objStart := open + 1 // first byte of the innermost object's body
	switch len(st.stack) {
	case 0:
	case 1:
		br := st.stack[0]
		if br.ch != '{' {
			return Completion{} // in a list or a call
		}
		object, objStart = keyBefore(text[:br.pos]), br.pos+1
	default:
		return Completion{} // deeper than the nested objects core knows
	}
	m := keyPosRE.FindStringSubmatch(lastStatement(text[objStart:off]))
	if m == nil {
		return Completion{}
	}
	c := Completion{Kind: CompleteConfigKey, Prefix: m[1], Object: object, Replace: Span{off - len(m[1]), off}}
	for _, k := range objectKeys(text, objStart) {
		if k.span.Start != c.Replace.Start {
			c.Present = append(c.Present, k.name)
		}
	}
	return c
}

// jsCompletionAt completes config objects of JavaScript calls and the JiT
// context in a JavaScript file.
func jsCompletionAt(s string, off int) Completion {
	if c, ok := jitContextAt(s, off); ok {
		return c
	}
	st := scanJS(s[:off], 0)
	// The config object: the outermost '{' of the last one or two (a
	// nested bigquery: { … }) open '{'s, opened as an argument of a call
	// that takes an action config.
	n := len(st.stack)
	for depth := 1; depth <= 2 && depth <= n; depth++ {
		obj := st.stack[n-depth]
		if obj.ch != '{' || n-depth == 0 {
			continue
		}
		call := st.stack[n-depth-1]
		if call.ch != '(' {
			continue
		}
		actionType, ok := configCall(s, call.pos, obj.pos)
		if !ok {
			continue
		}
		for _, inner := range st.stack[n-depth+1:] {
			if inner.ch != '{' {
				return Completion{}
			}
		}
		end := matchingEnd(s, obj.pos)
		text := s[:max(end, off)]
		c := configCompletion(text, off, obj.pos)
		if c.Kind == CompleteNothing {
			return c
		}
		c.JS = true
		if c.Kind == CompleteConfigKey {
			if m := configTypeRE.FindStringSubmatch(s[obj.pos:max(end, off)]); m != nil && actionType == "table" {
				actionType = m[1]
			}
			c.ActionType = actionType
		}
		return c
	}
	return Completion{}
}

// configCall reports whether the call whose "(" is at s[paren] takes an
// action config as the object at s[obj]: publish/operate/assert/declare
// (the object first, or after the name), or .config(…). It returns the
// action type the call makes ("table" for publish unless the config says
// otherwise).
func configCall(s string, paren, obj int) (string, bool) {
	between := strings.TrimSpace(s[paren+1 : obj])
	callee := strings.TrimRightFunc(s[:paren], isSpaceRune)
	if strings.HasSuffix(callee, ".config") || strings.HasSuffix(callee, ". config") {
		if between != "" {
			return "", false
		}
		head := callHeadRE.FindAllStringSubmatch(s[:paren], -1)
		if len(head) == 0 {
			return "", true
		}
		return callType(head[len(head)-1][1]), true
	}
	name := callee
	if i := strings.LastIndexFunc(callee, func(r rune) bool { return !isIdentRune(r) }); i >= 0 {
		if callee[i] == '.' {
			return "", false // a method of something else
		}
		name = callee[i+1:]
	}
	switch name {
	case "publish", "operate", "assert", "declare", "test":
	default:
		return "", false
	}
	if between != "" {
		// The name first: publish("x", { … }).
		if !strings.HasSuffix(between, ",") {
			return "", false
		}
		if _, next, ok := stringLit(between, 0); !ok || strings.TrimSpace(between[next:]) != "," {
			return "", false
		}
	}
	return callType(name), true
}

func callType(call string) string {
	switch call {
	case "publish":
		return "table"
	case "operate":
		return "operations"
	case "assert":
		return "assertion"
	case "declare":
		return "declaration"
	case "test":
		return "test"
	}
	return ""
}

func isSpaceRune(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
func isIdentRune(r rune) bool { return r < 128 && isIdentByte(byte(r)) }

// jitContextAt completes members of the JiT context: the cursor is after
// "<param>." or "<param>.adapter." inside the function given to
// .jitCode(…), whose first parameter is <param>.
func jitContextAt(s string, off int) (Completion, bool) {
	path, partial, ok := MemberPath([]byte(s), off)
	if !ok || len(path) == 0 || len(path) > 2 || len(path) == 2 && path[1] != "adapter" {
		return Completion{}, false
	}
	calls := jitCodeRE.FindAllStringSubmatchIndex(s[:off-len(partial)], -1)
	for i := len(calls) - 1; i >= 0; i-- {
		m := calls[i]
		if s[m[2]:m[3]] != path[0] {
			continue
		}
		// Still inside that .jitCode( call?
		paren := strings.IndexByte(s[m[0]:], '(') + m[0]
		inside := false
		for _, br := range scanJS(s[:off-len(partial)], 0).stack {
			if br.pos == paren {
				inside = true
			}
		}
		if !inside {
			continue
		}
		c := Completion{Kind: CompleteJitContext, Prefix: partial, Replace: Span{off - len(partial), off}}
		if len(path) == 2 {
			c.Object = "adapter"
		}
		if head := callHeadRE.FindAllStringSubmatch(s[:m[0]], -1); len(head) > 0 {
			c.ActionType = callType(head[len(head)-1][1])
		}
		return c, true
	}
	return Completion{}, false
}

// MemberPath reads the member access being typed at offset: "r.page.ur"
// gives path [r page] and partial "ur"; ok is false when the cursor is not
// after a dot (no path).
func MemberPath(src []byte, offset int) (path []string, partial string, ok bool) {
	if offset < 0 || offset > len(src) {
		return nil, "", false
	}
	word := func(end int) int {
		i := end
		for i > 0 && isIdentByte(src[i-1]) {
			i--
		}
		return i
	}
	i := word(offset)
	partial = string(src[i:offset])
	for i > 0 && src[i-1] == '.' {
		j := word(i - 1)
		if j == i-1 {
			return nil, "", false // ".." or a dot after something else
		}
		if c := src[j]; c >= '0' && c <= '9' {
			return nil, "", false // a number
		}
		path = append([]string{string(src[j : i-1])}, path...)
		i = j
	}
	if len(path) == 0 {
		return nil, "", false
	}
	return path, partial, true
}

// lastStatement is body from the last "{" or "," at the current level on
// (enough to tell a key position from a value position).
func lastStatement(body string) string {
	i := strings.LastIndexAny(body, "{,:")
	if i >= 0 && body[i] == ':' {
		return ":" // a value position
	}
	if i < 0 {
		return body
	}
	return body[i:]
}

var keyBeforeBraceRE = regexp.MustCompile(`([A-Za-z_]\w*)\s*:\s*$`)

// keyBefore is the key whose value is the object opening after text
// ("bigquery" for `bigquery: {`), or "".
func keyBefore(text string) string {
	if m := keyBeforeBraceRE.FindStringSubmatch(text[max(0, len(text)-200):]); m != nil {
		return m[1]
	}
	return ""
}

// bracket is an open bracket of JavaScript text.
type bracket struct {
	ch  byte // '(', '[' or '{'
	pos int
}

// jsState is the state of JavaScript text at its end: the brackets still
// open (a template literal's ${ counts as '{'), and whether it ends inside
// a string (the quote) or a comment.
type jsState struct {
	stack     []bracket
	inString  byte
	inComment bool
}

// scanJS follows JavaScript text from s[from] on: strings, template
// literals (with ${} nesting), comments and brackets. Regular expression
// literals are not recognised (rare in Dataform configs).
func scanJS(s string, from int) jsState {
	var st jsState
	var templates []int // stack depths at which a template literal's ${ opened
	inTemplate := false
	for i := from; i < len(s); i++ {
		c := s[i]
		if inTemplate {
			switch {
			case c == '\\':
				i++
			case c == '`':
				inTemplate = false
			case c == '$' && i+1 < len(s) && s[i+1] == '{':
				templates = append(templates, len(st.stack))
				st.stack = append(st.stack, bracket{'{', i + 1})
				inTemplate = false
				i++
			}
			continue
		}
		switch c {
		case '/':
			if i+1 < len(s) && s[i+1] == '/' {
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					st.inComment = true
					return st
				}
				i += j
			} else if i+1 < len(s) && s[i+1] == '*' {
				j := strings.Index(s[i+2:], "*/")
				if j < 0 {
					st.inComment = true
					return st
				}
				i += 2 + j + 1
			}
		case '\'', '"':
			j := i + 1
			for ; j < len(s) && s[j] != c && s[j] != '\n'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				st.inString = c
				return st
			}
			i = j
		case '`':
			inTemplate = true
		case '(', '[', '{':
			st.stack = append(st.stack, bracket{c, i})
		case ')', ']', '}':
			if len(st.stack) > 0 {
				st.stack = st.stack[:len(st.stack)-1]
			}
			if c == '}' && len(templates) > 0 && templates[len(templates)-1] == len(st.stack) {
				templates = templates[:len(templates)-1]
				inTemplate = true
			}
		}
	}
	if inTemplate {
		st.inString = '`'
	}
	return st
}

// matchingEnd is the index of the bracket closing the one at s[open], or
// len(s) when it is not closed.
func matchingEnd(s string, open int) int {
	depth := 0
	end := len(s)
	scanUntil(s, open, func(i int, c byte) bool {
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				end = i
				return false
			}
		}
		return true
	})
	return end
}

// scanUntil calls f with every bracket outside strings and comments from
// s[from] on, until f returns false.
func scanUntil(s string, from int, f func(i int, c byte) bool) {
	for i := from; i < len(s); i++ {
		c := s[i]
		switch c {
		case '/':
			if i+1 < len(s) && s[i+1] == '/' {
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					return
				}
				i += j
			} else if i+1 < len(s) && s[i+1] == '*' {
				j := strings.Index(s[i+2:], "*/")
				if j < 0 {
					return
				}
				i += 2 + j + 1
			}
		case '\'', '"', '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(', '[', '{', ')', ']', '}':
			if !f(i, c) {
				return
			}
		}
	}
}

type objectKey struct {
	name string
	span Span
}

// objectKeys are the keys of the object whose body starts at s[from] (just
// after its '{', or the start of a SQLX config body), up to its closing
// brace: identifiers or string literals followed by ':' at its top level.
func objectKeys(s string, from int) []objectKey {
	var out []objectKey
	depth := 0
	expectKey := true
	for i := from; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return out
			}
			i += 2 + j + 1
			continue
		case c == '(' || c == '[' || c == '{':
			depth++
			expectKey = false
		case c == ')' || c == ']' || c == '}':
			if depth == 0 {
				return out
			}
			depth--
		case c == ',' && depth == 0:
			expectKey = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '\'' || c == '"' || c == '`':
			lit, next, ok := stringLit(s, i)
			if !ok {
				// A template with ${}, or unclosed: skip to its end.
				for i++; i < len(s) && s[i] != c; i++ {
					if s[i] == '\\' {
						i++
					}
				}
				expectKey = false
				continue
			}
			if expectKey && depth == 0 && colonAfter(s, next) {
				out = append(out, objectKey{lit.Value, lit.Span})
			}
			expectKey = false
			i = next - 1
		case isIdentByte(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			if expectKey && depth == 0 && colonAfter(s, j) {
				out = append(out, objectKey{s[i:j], Span{i, j}})
			}
			expectKey = false
			i = j - 1
		default:
			expectKey = false
		}
	}
	return out
}

func colonAfter(s string, i int) bool {
	i = skipSpace(s, i)
	return i < len(s) && s[i] == ':'
}

// ConfigKey is a key of a SQLX config block.
type ConfigKey struct {
	Name string
	Doc  string
	// Types lists the action types it applies to; empty: all.
	Types []string
}

// ConfigKeys are the keys of a SQLX config block (@dataform/core 3.x
// configs.proto ActionConfig, with the SQLX names core accepts), by
// enclosing object ("" for the config itself).
var ConfigKeys = map[string][]ConfigKey{
	"": {
		{Name: "type", Doc: `Action type: "table", "view", "incremental", "operations", "assertion", "declaration" or "test".`},
		{Name: "name", Doc: "Action name (defaults to the file name)."},
		{Name: "schema", Doc: "Dataset (schema) the action writes to."},
		{Name: "database", Doc: "Google Cloud project the action writes to."},
		{Name: "dependencies", Doc: "Actions to run before this one, by name."},
		{Name: "tags", Doc: "Tags, for selecting actions to run."},
		{Name: "disabled", Doc: "Skip this action when running."},
		{Name: "description", Doc: "Description, also written to BigQuery."},
		{Name: "columns", Doc: "Column descriptions: {column: \"description\"}."},
		{Name: "hermetic", Doc: "The action depends only on its declared dependencies."},
		{Name: "dependOnDependencyAssertions", Doc: "Also depend on the assertions of every dependency."},
		{Name: "reservation", Doc: "BigQuery reservation to run in."},
		{Name: "assertions", Doc: "Built-in assertions: uniqueKey, uniqueKeys, nonNull, rowConditions.", Types: []string{"table", "view", "incremental"}},
		{Name: "bigquery", Doc: "BigQuery options (legacy form): partitionBy, clusterBy, labels, ….", Types: []string{"table", "view", "incremental"}},
		{Name: "partitionBy", Doc: "Partitioning expression.", Types: []string{"table", "view", "incremental"}},
		{Name: "partitionExpirationDays", Doc: "Days to keep each partition.", Types: []string{"table", "incremental"}},
		{Name: "requirePartitionFilter", Doc: "Queries must filter on the partition column.", Types: []string{"table", "incremental"}},
		{Name: "clusterBy", Doc: "Clustering columns.", Types: []string{"table", "view", "incremental"}},
		{Name: "labels", Doc: "BigQuery labels.", Types: []string{"table", "view", "incremental"}},
		{Name: "additionalOptions", Doc: "Extra OPTIONS() of the table.", Types: []string{"table", "view", "incremental"}},
		{Name: "materialized", Doc: "Create a materialized view.", Types: []string{"view"}},
		{Name: "protected", Doc: "Never rebuild the table from scratch.", Types: []string{"incremental"}},
		{Name: "uniqueKey", Doc: "Columns that identify a row; rows are merged on it.", Types: []string{"incremental"}},
		{Name: "updatePartitionFilter", Doc: "Filter limiting the partitions a merge scans.", Types: []string{"incremental"}},
		{Name: "onSchemaChange", Doc: `"IGNORE", "FAIL", "EXTEND" or "SYNCHRONIZE".`, Types: []string{"incremental"}},
		{Name: "hasOutput", Doc: "The operation creates a table or view named after the action.", Types: []string{"operations"}},
	},
	"assertions": {
		{Name: "uniqueKey", Doc: "Columns whose combination must be unique."},
		{Name: "uniqueKeys", Doc: "Several unique keys."},
		{Name: "nonNull", Doc: "Columns that must not be NULL."},
		{Name: "rowConditions", Doc: "SQL conditions every row must satisfy."},
	},
	"bigquery": {
		{Name: "partitionBy", Doc: "Partitioning expression."},
		{Name: "clusterBy", Doc: "Clustering columns."},
		{Name: "updatePartitionFilter", Doc: "Filter limiting the partitions a merge scans."},
		{Name: "labels", Doc: "BigQuery labels."},
		{Name: "partitionExpirationDays", Doc: "Days to keep each partition."},
		{Name: "requirePartitionFilter", Doc: "Queries must filter on the partition column."},
		{Name: "additionalOptions", Doc: "Extra OPTIONS() of the table."},
	},
}

// ActionTypes are the values of a SQLX config's type key.
var ActionTypes = []string{"table", "view", "incremental", "operations", "assertion", "declaration", "test"}

// JitMember is a member of the context JiT code gets (core's
// SqlActionJitContext, TableJitContext and IncrementalTableJitContext in
// @dataform/core 3.x), or of its adapter.
type JitMember struct {
	Name string
	// Signature is shown as the detail: "(name) → string".
	Signature string
	Doc       string
	Method    bool
	// Types lists the action types that have it; empty: all.
	Types []string
}

// JitMembers are the JiT context's members by object: "" for the context,
// "adapter" for jctx.adapter.
var JitMembers = map[string][]JitMember{
	"": {
		{Name: "adapter", Signature: "DbAdapter", Doc: "Database calls: execute, getTable, listTables, deleteTable (each returns a Promise)."},
		{Name: "data", Signature: "object", Doc: "The action's jitData, as a plain object."},
		{Name: "executionData", Signature: "RunningExecutionData", Doc: "The running execution (absent outside a run)."},
		{Name: "target", Signature: "Target", Doc: "The action's target: database, schema, name."},
		{Name: "request", Signature: "JitCompilationRequest", Doc: "The whole JiT compilation request."},
		{Name: "self", Signature: "() → string", Doc: "The action's own table, quoted: `database.schema.name`.", Method: true},
		{Name: "name", Signature: "() → string", Doc: "The action's name.", Method: true},
		{Name: "schema", Signature: "() → string", Doc: "The action's schema (dataset).", Method: true},
		{Name: "database", Signature: "() → string", Doc: "The action's database (project).", Method: true},
		{Name: "ref", Signature: "(name | schema, name | target) → string", Doc: "A declared dependency's table, quoted.", Method: true},
		{Name: "resolve", Signature: "(name | schema, name | target) → string", Doc: "A declared dependency's table, quoted (as ref).", Method: true},
		{Name: "when", Signature: "(condition, then, else?) → string", Doc: "then when condition holds, else else (or \"\").", Method: true,
			Types: []string{"table", "view", "incremental"}},
		{Name: "incremental", Signature: "() → boolean", Doc: "Whether this run updates the table incrementally.", Method: true,
			Types: []string{"table", "view", "incremental"}},
	},
	"adapter": {
		{Name: "execute", Signature: "({statement, …}) → Promise<ExecuteResponse>", Doc: "Runs a statement (in a preview: read-only queries only, under the preview policy).", Method: true},
		{Name: "getTable", Signature: "({target}) → Promise<TableMetadata>", Doc: "A table's metadata: type, fields, description.", Method: true},
		{Name: "listTables", Signature: "({database, schema}) → Promise<ListTablesResponse>", Doc: "The tables of a dataset, with their metadata.", Method: true},
		{Name: "deleteTable", Signature: "({target}) → Promise", Doc: "Deletes a table (refused in previews).", Method: true},
	},
}

// SQLKeywords are words that, written after a ref's placeholder, are the
// SQL going on rather than an alias.
var SQLKeywords = map[string]bool{
	"where": true, "join": true, "left": true, "right": true, "inner": true, "full": true, "cross": true,
	"on": true, "using": true, "group": true, "order": true, "having": true, "qualify": true, "limit": true,
	"union": true, "except": true, "intersect": true, "window": true, "select": true, "from": true, "as": true,
	"tablesample": true, "for": true, "unnest": true, "with": true,
}

// RefAlias is the alias written after a ref's placeholder that ends at
// src[end] (`${ref("t")} AS a` or `${ref("t")} a`), or "": what
// `^\s*\}\s*(?:(?i:AS)\s+)?([A-Za-z_]\w*)` matches there, unless it is an
// SQL keyword.
func RefAlias(src []byte, end int) string {
	if end < 0 || end > len(src) {
		return ""
	}
	spaces := func(i int) int {
		for i < len(src) && isRESpace(src[i]) {
			i++
		}
		return i
	}
	ident := func(i int) string {
		if i >= len(src) || !(src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z') {
			return ""
		}
		j := i + 1
		for j < len(src) && isWordByte(src[j]) {
			j++
		}
		return string(src[i:j])
	}
	i := spaces(end)
	if i >= len(src) || src[i] != '}' {
		return ""
	}
	i = spaces(i + 1)
	name := ident(i)
	if strings.EqualFold(name, "as") {
		if j := spaces(i + 2); j > i+2 {
			if n := ident(j); n != "" {
				name = n
			}
		}
	}
	if name == "" || SQLKeywords[strings.ToLower(name)] {
		return ""
	}
	return name
}

// clauses are the SQL words that end a SELECT list (or start one).
var clauses = map[string]bool{
	"select": true, "from": true, "where": true, "group": true, "order": true, "having": true, "qualify": true,
	"limit": true, "union": true, "join": true, "on": true, "window": true,
}

// InSelectList reports whether offset is between a SELECT and its FROM (or
// the next clause) in the SQL of the statement it is in: the last clause
// word before it, outside ${} placeholders, is SELECT.
func (x *SQLX) InSelectList(src []byte, offset int) bool {
	return x.ClauseAt(src, offset) == "select"
}

// columnClauses are the clauses whose expressions name columns of the
// tables the statement reads: SELECT, WHERE, GROUP BY, HAVING, QUALIFY,
// ORDER BY (a window's ORDER BY too) and JOIN … ON.
var columnClauses = map[string]bool{"select": true, "where": true, "group": true, "having": true, "qualify": true, "order": true, "on": true}

// InColumnClause reports whether offset is in a clause whose expressions
// name columns (columnClauses): where column completion belongs, and not
// in FROM, JOIN's table, LIMIT or WINDOW.
func (x *SQLX) InColumnClause(src []byte, offset int) bool {
	return columnClauses[x.ClauseAt(src, offset)]
}

// ClauseAt is the clause offset is in, in the SQL of the statement it is
// in: the last clause word before it (lower case: "select", "from",
// "where", "group", "order", "having", "qualify", "limit", "union",
// "join", "on", "window"), outside ${} placeholders; "" before any. It
// reads backwards from offset, so a long statement costs only what lies
// between the cursor and its clause.
func (x *SQLX) ClauseAt(src []byte, offset int) string {
	if offset < 0 || offset > len(src) {
		return ""
	}
	start := 0
	if b, ok := x.Config(); ok && b.Span.End <= offset {
		start = b.Span.End
	}
	for _, b := range x.Blocks {
		if b.Span.End <= offset && b.Span.End > start {
			start = b.Span.End
		}
		if b.Body.Start <= offset && offset <= b.Body.End && b.Body.Start > start {
			start = b.Body.Start
		}
	}
	for _, sep := range x.Separators {
		if sep.Span.End <= offset && sep.Span.End > start {
			start = sep.Span.End
		}
	}
	// Placeholders are in order and never nested (they only open in
	// SQL); ph walks back to the last one starting at or before i.
	ph := len(x.Placeholders) - 1
	masked := func(i int) bool {
		for ph >= 0 && x.Placeholders[ph].Start > i {
			ph--
		}
		return ph >= 0 && i < x.Placeholders[ph].End
	}
	isWord := func(i int) bool { // RE2's \w
		c := src[i]
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := offset - 1; i >= start; {
		if masked(i) || !isWord(i) {
			i--
			continue
		}
		end := i + 1
		for i >= start && !masked(i) && isWord(i) {
			i--
		}
		if w := strings.ToLower(string(src[i+1 : end])); clauses[w] {
			return w
		}
	}
	return ""
}
