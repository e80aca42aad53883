package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
	"google.golang.org/protobuf/proto"
)

// Bounds of the JiT checks run after each compile (jitDiagnostics).
const (
	jitCheckTimeout     = 5 * time.Second  // one action's JiT code (default of dfd.jit.timeoutMs)
	jitCheckBudget      = 10 * time.Second // all of them
	jitCheckConcurrency = 4
)

// jitDiagnostics runs, like a preview does (the metadata source, stand-in
// execution data) but under the check policy (nothing billed runs: queries
// are answered from the query cache or as dry runs), the JiT code of every
// action defined in an open .js file (a key of overlays), and returns an
// Error diagnostic (code jit-failed) on the action's `.jitCode(` for each
// one whose code fails or times out. Failures that may come from a
// database call are not reported — any recorded call failed, or was
// answered as a dry run (no rows, where a real run has some): they are
// what a preview is for. ctx is the compile's: a newer compile cancels it.
//
// It also returns the responses of the JiT code that ran with every
// database call answered for real (from the cache or a read-only query,
// never a dry run's empty rows), by target: the SQL analysis checks those,
// and only those, as the SQL a run would produce.
func (op *openProject) jitDiagnostics(ctx context.Context, ms metaSource, g *dataformpb.CompiledGraph, wire []byte, overlays map[string][]byte) ([]workspace.Diagnostic, map[string]*dataformpb.JitCompilationResponse) {
	root := op.p.Root
	if ms.adapter == nil || g == nil || len(overlays) == 0 {
		return nil, nil
	}
	type job struct {
		file, name, full, code string
	}
	var jobs []job
	add := func(file string, t, canonical *dataformpb.Target, jit string) {
		if jit == "" || t == nil || !strings.HasSuffix(file, ".js") {
			return
		}
		if _, open := overlays[file]; !open {
			return
		}
		name := t.GetName()
		if canonical != nil && canonical.GetName() != "" {
			name = canonical.GetName()
		}
		jobs = append(jobs, job{file: file, name: name, full: adapters.TargetString(t), code: jit})
	}
	for _, t := range g.GetTables() {
		add(t.GetFileName(), t.GetTarget(), t.GetCanonicalTarget(), t.GetJitCode())
	}
	for _, o := range g.GetOperations() {
		add(o.GetFileName(), o.GetTarget(), o.GetCanonicalTarget(), o.GetJitCode())
	}
	for _, a := range g.GetAssertions() {
		add(a.GetFileName(), a.GetTarget(), a.GetCanonicalTarget(), a.GetJitCode())
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, jitCheckBudget)
	defer cancel()
	var (
		mu     sync.Mutex
		out    []workspace.Diagnostic
		ran    = map[string]*dataformpb.JitCompilationResponse{}
		wg     sync.WaitGroup
		sem    = make(chan struct{}, jitCheckConcurrency)
		parent = ctx
	)
	for _, j := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			resp, msg, stack, failed := op.checkJit(parent, ms, g, wire, overlays, j.full)
			if resp != nil && parent.Err() == nil {
				mu.Lock()
				ran[j.full] = resp
				mu.Unlock()
			}
			if !failed || parent.Err() != nil {
				return
			}
			d := jitFailureDiagnostic(root, j.file, j.name, j.code, stack, overlays[j.file])
			d.Message = "JiT code of " + j.full + " failed: " + msg
			onFreeName(&d, j.code, msg, stack, overlays[j.file])
			mu.Lock()
			out = append(out, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded {
		return nil, nil // cancelled: the compile result is dropped anyway
	}
	sort.SliceStable(out, func(i, k int) bool {
		if out[i].Path != out[k].Path {
			return out[i].Path < out[k].Path
		}
		return out[i].Line < out[k].Line
	})
	return out, ran
}

// checkJit runs one action's JiT code; failed reports a script error or
// timeout that no failed database call may explain, with its JavaScript
// stack when it has one (in process and from workers alike). resp is the
// code's response when it succeeded with every database call answered for
// real.
func (op *openProject) checkJit(ctx context.Context, ms metaSource, g *dataformpb.CompiledGraph, wire []byte, overlays map[string][]byte, name string) (resp *dataformpb.JitCompilationResponse, msg, stack string, failed bool) {
	b := op.b
	action, err := compile.FindAction(g, name)
	if err != nil {
		return nil, "", "", false
	}
	jreq, err := compile.JitRequest(g, action, compile.JitOptions{
		AllowDisabled: true,
		ExecutionData: compile.PreviewExecutionData(action, time.Now()),
	})
	if err != nil {
		return nil, "", "", false
	}
	enc, err := compile.EncodeJitRequest(jreq, wire)
	if err != nil {
		return nil, "", "", false
	}
	settings := b.currentSettings()
	timeout := jitCheckTimeoutFor(settings)
	rec := adapters.NewRecorder(checkPolicy(settings).Wrap(ms.adapter))
	actx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	defer cancel()
	rpc := func(ctx context.Context, method string, req []byte) ([]byte, error) {
		return adapters.Dispatch(ctx, rec, method, req)
	}
	out, err := op.runner.Jit(actx, rpc, jit.JitJob{
		Request: enc,
		Overlay: overlays,
		Timeout: timeout,
		Log: func(level, msg string) {
			b.log.Debug("jit check console."+level+": "+msg, "action", name)
		},
	})
	answered := true
	for _, c := range rec.Calls() {
		if c.Code != "" || c.Error != "" || c.DryRun {
			answered = false // a failure is possibly caused by the database call
		}
	}
	if ctx.Err() != nil {
		return nil, "", "", false
	}
	if err == nil {
		if !answered {
			return nil, "", "", false
		}
		r := &dataformpb.JitCompilationResponse{}
		if proto.Unmarshal(out, r) != nil {
			return nil, "", "", false
		}
		return r, "", "", false
	}
	if !answered {
		return nil, "", "", false
	}
	var se *engine.ScriptError
	var we *jit.WorkerError
	switch {
	case errors.As(err, &se):
		stack = se.Stack
	case errors.As(err, &we):
		stack = we.Stack
	}
	return nil, err.Error(), stack, true
}

// jitFailureDiagnostic is the Error of failed JiT code: on the line of the
// code that threw (the first frame of stack in the code, found where the
// code is written in text), else on the action's `.jitCode(`
// (jitCodeDiagnostic).
func jitFailureDiagnostic(root, file, name, code, stack string, text []byte) workspace.Diagnostic {
	d := jitCodeDiagnostic(root, file, name, text)
	off, ok := source.JitThrowOffset(stack, code)
	if !ok || text == nil {
		return d
	}
	offs := writtenAt(text, code, off, source.JitFunctionsAround(code, off))
	if len(offs) == 0 {
		return d
	}
	m := source.NewMapper(text)
	at := offs[0]
	if d.EndLine >= 0 { // the action's own code: the occurrence after its .jitCode(
		call := m.OffsetBytes(d.Line, d.Col)
		for _, o := range offs {
			if o >= call {
				at = o
				break
			}
		}
	}
	d.Line = m.LineOf(at)
	d.Col = at - m.OffsetBytes(d.Line, 0)
	d.EndLine = -1
	return d
}

var referenceErrorRE = regexp.MustCompile(`ReferenceError: ([\p{L}\p{N}_$]+) is not defined`)

// onFreeName turns the failure d of code into the free-variable warning's
// confirmation when the code threw a ReferenceError at a use of a name
// jitFreeNameDiagnostics warns about: d goes on the name, replaces the
// warning there and says why the name is missing. Engines place the throw
// at the name (V8) or at the call after it (goja), so the use is the last
// one of the name on the throw's line that starts at or before it.
func onFreeName(d *workspace.Diagnostic, code, msg, stack string, text []byte) {
	m := referenceErrorRE.FindStringSubmatch(msg)
	if m == nil || text == nil || d.EndLine >= 0 {
		return // not a ReferenceError, or not placed on the line that threw
	}
	off, ok := source.JitThrowOffset(stack, code)
	if !ok {
		return
	}
	uses, ok := source.JitFreeNames(code)
	if !ok {
		return
	}
	start := -1
	for _, u := range uses {
		if u.Name == m[1] && u.Span.Start <= off && !strings.Contains(code[u.Span.Start:off], "\n") {
			start = u.Span.Start
		}
	}
	mp := source.NewMapper(text)
	at := mp.OffsetBytes(d.Line, d.Col) - (off - start)
	if start < 0 || at < 0 || at+len(m[1]) > len(text) || string(text[at:at+len(m[1])]) != m[1] {
		return
	}
	*d = withSpan(*d, mp, source.Span{Start: at, End: at + len(m[1])})
	d.Replaces = jitFreeVariableCode
	d.Message += ": " + jitScopeAdvice(m[1])
}

var jitCodeCallRE = regexp.MustCompile(`\.\s*jitCode\s*\(`)

// jitCodeDiagnostic is an Error diagnostic on the `.jitCode(` of the
// action called name in file: the one after the publish/operate/assert
// (…) call naming it, else the file's first, else line 1.
func jitCodeDiagnostic(root, file, name string, text []byte) workspace.Diagnostic {
	d := workspace.Diagnostic{
		Path: filepath.Join(root, filepath.FromSlash(file)), EndLine: -1,
		Severity: workspace.SeverityError, Source: "dfd", Code: "jit-failed",
	}
	if text == nil {
		return d
	}
	var loc []int
	decl := regexp.MustCompile(`\b(?:publish|operate|assert|table|view|incremental)\s*\(\s*["'\x60]` + regexp.QuoteMeta(name) + `["'\x60]`)
	if m := decl.FindIndex(text); m != nil {
		if l := jitCodeCallRE.FindIndex(text[m[1]:]); l != nil {
			loc = []int{m[1] + l[0], m[1] + l[1]}
		}
	}
	if loc == nil {
		loc = jitCodeCallRE.FindIndex(text)
	}
	if loc == nil {
		return d
	}
	m := source.NewMapper(text)
	sl, el := m.LineOf(loc[0]), m.LineOf(loc[1])
	d.Line, d.Col = sl, loc[0]-m.OffsetBytes(sl, 0)
	d.EndLine, d.EndCol = el, loc[1]-m.OffsetBytes(el, 0)
	return d
}
