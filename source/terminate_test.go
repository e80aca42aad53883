package source

import (
	"strings"
	"testing"
	"time"
)

// Half-typed code must never hang a scanner: the daemon scans every open
// file on each keystroke, and one loop that made no progress on a ';'
// inside a publish() config ({;}) spun a core forever and left the project
// deaf. Each seed below is edited at every token boundary with each of the
// characters a user types mid-word, and every scanner the daemon runs on
// a change must finish.
func TestScannersFinishOnHalfTypedCode(t *testing.T) {
	seeds := map[string]string{
		"definitions/a.js": `const x = require("../includes/c");
publish("a", {type: "view", schema: x.s, tags: ["t"], dependencies: ["b"], ...x.more, [k]: 1, get g() { return 1 }})
  .query(ctx => ` + "`SELECT ${ctx.ref(\"b\")} FROM t`" + `)
  .jitCode(async (jctx) => { return "SELECT 1"; });
assert("c", {}).query("SELECT 1"); declare({database: "d", schema: "s", name: "n"});
`,
		"definitions/b.sqlx": `config { type: "table", description: "x", columns: { a: "y" }, assertions: { uniqueKey: ["a"] } }
js { const n = 1; }
pre_operations { CREATE TEMP FUNCTION f(s STRING) AS (s) }
SELECT ${ref("a")} AS a, ${ref({schema: "s", name: "n"})} FROM ${resolve("c")}
`,
		"includes/c.js": `const s = "x"; function more() { return {a: 1}; }
module.exports = { s, more, t: ` + "`${s}`" + ` };
`,
	}
	inserts := []string{";", ")", "]", "}", "{", "(", "[", ",", ":", "`", "${", "\"", "'", "...", "=>", "/*", "//", "\n"}
	for path, seed := range seeds {
		for at := 0; at <= len(seed); at++ {
			if at > 0 && at < len(seed) && isWordByte(seed[at-1]) && isWordByte(seed[at]) {
				continue // inside a word: the same tokens as at its edges
			}
			for _, ins := range inserts {
				text := []byte(seed[:at] + ins + seed[at:])
				done := make(chan struct{})
				go func() {
					defer close(done)
					scanAll(path, text)
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s with %q inserted at byte %d: a scanner did not finish:\n%s", path, ins, at, text)
				}
			}
		}
	}
}

// scanAll runs the scanners the daemon runs on a changed file.
func scanAll(path string, text []byte) {
	ScanNames(path, text)
	ScanIncludeUses(path, text, func(string) bool { return true })
	IncludeDecls(text)
	FindRefs(text)
	FindRequires(text)
	FindDependencies(text)
	if strings.HasSuffix(path, ".sqlx") {
		x := ScanSQLX(text)
		SQLXConfig(text)
		SQLXFolds(text, x)
		CompileLayout(text)
		for _, off := range []int{0, len(text) / 2, len(text)} {
			CompletionAt(text, off, x)
		}
	}
	for _, off := range []int{0, len(text) / 3, len(text) / 2, len(text)} {
		MemberPath(text, off)
		WordAt(text, off)
		StringAt(text, off)
	}
}
