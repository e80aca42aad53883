package source

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var (
	refSeparatorRE = regexp.MustCompile(`^[^\S\r\n]*---[^\S\r\n]*(?:\r?\n|$)`)
	refInputRE     = regexp.MustCompile(`^input "[a-zA-Z0-9_-]+"(?:,\s*"[a-zA-Z0-9_-]+")* \{`)
	refJSSingleRE  = regexp.MustCompile(`^'(?:\\['\\]|[^\n'\\])*'`)
	refJSDoubleRE  = regexp.MustCompile(`^"(?:\\["\\]|[^\n"\\])*"`)
)

// scanSQLXReference is ScanSQLX as it was before it skipped uninteresting
// bytes: one rule check per byte, with regular expressions. The tests hold
// the fast lexer to it.
func scanSQLXReference(src []byte) *SQLX {
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
	blockComment := func(i int) (int, bool) {
		if j := strings.Index(s[i+2:], "*/"); j >= 0 {
			return i + 2 + j + 2, true
		}
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
		m := refSeparatorRE.FindString(s[i:])
		if m == "" {
			return 0, false
		}
		end := i + len(strings.TrimRight(m, "\r\n"))
		x.Separators = append(x.Separators, Separator{Span: Span{i, end}, Block: currentBlock()})
		return end, true
	}

	for i := 0; i < len(s); {
		top := stack[len(stack)-1].state
		rest := s[i:]
		switch top {
		case stSQL:
			switch {
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
			if m := refInputRE.FindString(rest); m != "" {
				startBlock(InputBlock, i, i+len(m), stSQLBlock)
				i += len(m)
				continue
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
			case rest[0] == '\'':
				if m := refJSSingleRE.FindString(rest); m != "" {
					i += len(m)
				} else {
					i++
				}
			case rest[0] == '"':
				if m := refJSDoubleRE.FindString(rest); m != "" {
					i += len(m)
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
			closing := map[lexState]string{stSingle: "'", stDouble: `"`, stTripleSingle: "'''", stTripleDouble: `"""`}[top]
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

// sqlxPieces are the fragments the random SQLX texts of the differential
// tests are made of: every token core's lexer distinguishes, and text.
var sqlxPieces = []string{
	"config {", "js {", "pre_operations {", "post_operations {", "incremental_where {", `input "a" {`, `input "a", "b" {`,
	"{", "}", "${", "`", "'", `"`, "'''", `"""`, `\`, `\'`, `\"`, `\\`, `\${`, "--", "//", "/*", "*/",
	"---", " --- ", "\t---\f", "\n", "\r\n", "\r", " ", "\t", "SELECT", "ref(\"x\")", "a", "x: 1,", "c", "j", "i", "p",
}

func randomSQLX(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(sqlxPieces[r.IntN(len(sqlxPieces))])
	}
	return b.String()
}

// ScanSQLX skips bytes no rule can start at; it must find exactly what the
// rule-per-byte lexer finds, on random texts and on every SQLX file of the
// repository's fixtures and examples.
func TestScanSQLXMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		src := randomSQLX(r, 1+r.IntN(40))
		if got, want := ScanSQLX([]byte(src)), scanSQLXReference([]byte(src)); !reflect.DeepEqual(got, want) {
			t.Fatalf("ScanSQLX(%q):\n got %+v\nwant %+v", src, got, want)
		}
	}
	var files []string
	for _, dir := range []string{"../testdata", "../examples"} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".sqlx") && !strings.Contains(p, "node_modules") {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 10 {
		t.Fatalf("only %d .sqlx files found", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ScanSQLX(src), scanSQLXReference(src); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", f, got, want)
		}
	}
}
