package daemon

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dfdtools/dfd/internal/lastuse"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// jitFreeNameDiagnostics warns, at each use, on the names JiT code uses
// but does not define (source.JitFreeNames): JiT code travels as text and
// runs without its module's scope, so such a name is a ReferenceError when
// the code runs. The code is the graph's jitCode; a use is placed where
// that text (or the text of the function around the use, for code put
// together from pieces) is written: in the action's file or a top-level
// includes file. Uses whose text is written nowhere are not reported.
func jitFreeNameDiagnostics(root string, g *dataformpb.CompiledGraph, paths []string, read fileReader, free func(code string) ([]source.FreeName, bool)) []workspace.Diagnostic {
	type jitAction struct{ file, code string }
	var jits []jitAction
	for _, t := range g.GetTables() {
		jits = append(jits, jitAction{t.GetFileName(), t.GetJitCode()})
	}
	for _, o := range g.GetOperations() {
		jits = append(jits, jitAction{o.GetFileName(), o.GetJitCode()})
	}
	for _, a := range g.GetAssertions() {
		jits = append(jits, jitAction{a.GetFileName(), a.GetJitCode()})
	}
	var includes []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, "includes/"); ok && !strings.Contains(rest, "/") && strings.HasSuffix(p, ".js") {
			includes = append(includes, p)
		}
	}
	var out []workspace.Diagnostic
	done := map[string]bool{} // file + code analysed
	for _, j := range jits {
		if j.code == "" || done[j.file+"\x00"+j.code] {
			continue
		}
		done[j.file+"\x00"+j.code] = true
		uses, ok := free(j.code)
		if !ok || len(uses) == 0 {
			continue
		}
		files := append([]string{j.file}, includes...)
		for _, u := range uses {
			for _, file := range files {
				text, ok := read(file)
				if !ok {
					continue
				}
				offs := writtenAt(text, j.code, u.Span.Start, u.Within)
				if len(offs) == 0 {
					continue
				}
				m := source.NewMapper(text)
				for _, off := range offs {
					d := withSpan(workspace.Diagnostic{
						Path:     filepath.Join(root, filepath.FromSlash(file)),
						Severity: workspace.SeverityWarning,
						Source:   "dfd",
						Code:     jitFreeVariableCode,
						Message:  "`" + u.Name + "` is not defined when the JiT code runs: " + jitScopeAdvice(u.Name),
					}, m, source.Span{Start: off, End: off + len(u.Name)})
					out = append(out, d)
				}
				break
			}
		}
	}
	return dedupe(out)
}

const jitFreeVariableCode = "jit-free-variable"

// jitScopeAdvice says why name is not defined in JiT code and what to do.
func jitScopeAdvice(name string) string {
	return "JiT code travels as text, without its module's scope; define `" + name + "` inside the function"
}

// writtenAt are the offsets in text of offset off of JiT code: where the
// whole code is written verbatim, else the innermost of the functions
// around off (within, innermost first, as source.JitFunctionsAround gives
// them) that is.
func writtenAt(text []byte, code string, off int, within []source.Span) []int {
	n := len(within)
	if n == 0 {
		return nil
	}
	for _, sp := range append([]source.Span{within[n-1]}, within[:n-1]...) {
		piece := []byte(code[sp.Start:sp.End])
		var offs []int
		for from := 0; ; {
			i := bytes.Index(text[from:], piece)
			if i < 0 {
				break
			}
			offs = append(offs, from+i+off-sp.Start)
			from += i + len(piece)
		}
		if len(offs) > 0 {
			return offs
		}
	}
	return nil
}

// jitFreeMemo remembers source.JitFreeNames of each JiT code from one
// compile of a project to the next (each compile is a run): parsing every
// JiT action's code again was 2 ms of each edit at 3,000 actions.
type jitFreeMemo struct {
	mu sync.Mutex
	m  lastuse.Memo[string, jitFreeNames]
}

type jitFreeNames struct {
	uses []source.FreeName
	ok   bool
}

// names is source.JitFreeNames(code), remembered.
func (m *jitFreeMemo) names(code string) ([]source.FreeName, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.m.Get(code); ok {
		return e.uses, e.ok
	}
	uses, ok := source.JitFreeNames(code)
	m.m.Put(code, jitFreeNames{uses, ok})
	return uses, ok
}

// sweep drops what the compile since the last sweep did not ask for.
func (m *jitFreeMemo) sweep() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m.EndRun()
}
