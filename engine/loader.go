package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/dfdtools/dfd/source"
)

// sourceExtensions are tried, in this order, for an extension-less require,
// as the official CLI configures vm2. The list is source's, so that
// go-to-definition on a require() finds what the engine loads.
var sourceExtensions = source.RequireExtensions

// jitExtensions are those of the CLI's JiT sandbox, which runs no compiler.
var jitExtensions = []string{".js", ".json", ".yaml", ".yml"}

const (
	coreModuleName = "@dataform/core"
	pathModuleName = "path"
)

// loader is a CommonJS loader confined to one project root.
type loader struct {
	rt    *Runtime
	root  string // absolute project root
	files Files
	jit   bool // JiT sandbox: no compiler, no builtins
	plain bool // modules run as they are, without core's compiler (ExportedVersion)

	modules map[string]*goja.Object // absolute filename → module object
	stats   map[string]statResult   // root-relative path → what Stat said, for this request

	// loads counts modules run (incremental.js tells from it whether a
	// definitions file loaded other modules); onRead, when set, is told
	// every file read (incremental.go keeps their digests).
	loads  int
	onRead func(name string, content []byte)
}

// statResult is a remembered Stat. Module resolution stats the same paths
// over and over (every require of "includes/x" tries x, x.js, …), and a
// request sees one consistent set of files, so one Stat per path is enough.
type statResult struct {
	isFile, isDir bool
	err           error
}

// moduleError is thrown into JavaScript as an Error with this message; a
// module that cannot be loaded (missing, a builtin, outside the project) is
// a VMError as vm2 throws it under the CLI.
type moduleError struct {
	msg      string
	notFound bool
}

func (e *moduleError) Error() string { return e.msg }

// notFound is vm2's refusal of require(id), whatever the reason: a missing
// module, a Node builtin the sandbox does not offer, or a path (by "..",
// absolute, or through a symbolic link) that leaves the project. The reason
// is not said, as the CLI does not say it, and nothing outside the project
// is read to find out.
func notFound(id string) error {
	return &moduleError{msg: fmt.Sprintf("Cannot find module '%s'", id), notFound: true}
}

// rel returns p relative to the root, or ok=false when p is not under it.
func (l *loader) rel(p string) (string, bool) {
	if p == l.root {
		return ".", true
	}
	if !strings.HasPrefix(p, l.root+"/") {
		return "", false
	}
	return p[len(l.root)+1:], true
}

// display names a path for messages: relative to the root when inside it.
func (l *loader) display(p string) string {
	if r, ok := l.rel(p); ok {
		return r
	}
	return p
}

// stat reports whether p is a regular file or a directory inside the root.
// An escape through a symbolic link is an error, so that it is reported as
// such rather than as a missing module.
func (l *loader) stat(p string) (isFile, isDir bool, err error) {
	r, ok := l.rel(p)
	if !ok {
		return false, false, nil
	}
	if sr, ok := l.stats[r]; ok {
		return sr.isFile, sr.isDir, sr.err
	}
	var sr statResult
	fi, err := l.files.Stat(r)
	switch {
	case err == nil:
		sr = statResult{isFile: !fi.IsDir(), isDir: fi.IsDir()}
	case errors.Is(err, ErrOutsideProject):
		sr = statResult{err: err}
	}
	if l.stats == nil {
		l.stats = map[string]statResult{}
	}
	l.stats[r] = sr
	return sr.isFile, sr.isDir, sr.err
}

func (l *loader) extensions() []string {
	if l.jit {
		return jitExtensions
	}
	return sourceExtensions
}

func (l *loader) loadAsFile(p string) (string, error) {
	isFile, _, err := l.stat(p)
	if err != nil || isFile {
		return p, err
	}
	for _, ext := range l.extensions() {
		isFile, _, err := l.stat(p + ext)
		if err != nil || isFile {
			return p + ext, err
		}
	}
	return "", nil
}

func (l *loader) loadIndex(p string) (string, error) {
	return l.loadAsFile(path.Join(p, "index"))
}

func (l *loader) loadAsDirectory(p string) (string, error) {
	if _, isDir, err := l.stat(p); err != nil || !isDir {
		return "", err
	}
	if r, ok := l.rel(path.Join(p, "package.json")); ok {
		if b, err := l.files.ReadFile(r); err == nil {
			if l.onRead != nil {
				l.onRead(r, b)
			}
			var pkg struct {
				Main string `json:"main"`
			}
			if json.Unmarshal(b, &pkg) == nil && pkg.Main != "" {
				m := path.Join(p, pkg.Main)
				if f, err := l.loadAsFile(m); err != nil || f != "" {
					return f, err
				}
				if f, err := l.loadIndex(m); err != nil || f != "" {
					return f, err
				}
			}
		}
	}
	return l.loadIndex(p)
}

func (l *loader) loadAsFileOrDirectory(p string) (string, error) {
	// Every candidate is in p's directory, so when that is not a directory
	// there is nothing to look for. The search for a bare name tries
	// node_modules of every directory up from the requiring file's, nearly
	// none of which exist (core requires each definitions file that way),
	// and each Stat through os.Root is several system calls.
	if p != l.root {
		if _, isDir, err := l.stat(path.Dir(p)); err != nil || !isDir {
			return "", err
		}
	}
	if f, err := l.loadAsFile(p); err != nil || f != "" {
		return f, err
	}
	return l.loadAsDirectory(p)
}

func isRelative(id string) bool {
	return id == "." || id == ".." || strings.HasPrefix(id, "./") || strings.HasPrefix(id, "../")
}

// resolve finds the file that require(id) from a module in dir loads, with
// Node's algorithm restricted to the project root, then the CLI's fallback
// of resolving a bare name against the root (core requires
// "definitions/x.sqlx" from inside node_modules).
func (l *loader) resolve(dir, id, from string) (string, error) {
	if id == "" {
		return "", notFound(id)
	}
	if isRelative(id) || strings.HasPrefix(id, "/") {
		target := id
		if !strings.HasPrefix(id, "/") {
			target = path.Join(dir, id)
		}
		if _, inside := l.rel(target); !inside {
			return "", notFound(id) // outside the project: not looked at
		}
		f, err := l.loadAsFileOrDirectory(target)
		if err != nil || f == "" {
			return "", notFound(id)
		}
		return f, nil
	}
	if strings.Contains(id, "..") && !path.IsAbs(id) {
		if _, inside := l.rel(path.Join(l.root, id)); !inside {
			return "", notFound(id) // it leads outside the project
		}
	}
	for d := dir; ; d = path.Dir(d) {
		if _, inside := l.rel(d); !inside {
			break
		}
		if path.Base(d) != "node_modules" {
			f, err := l.loadAsFileOrDirectory(path.Join(d, "node_modules", id))
			if err != nil {
				return "", notFound(id) // a symbolic link out of the project
			}
			if f != "" {
				return f, nil
			}
		}
		if d == l.root {
			break
		}
	}
	if !l.jit {
		f, err := l.loadAsFileOrDirectory(path.Join(l.root, id))
		if err != nil {
			return "", notFound(id)
		}
		if f != "" {
			return f, nil
		}
	}
	return "", notFound(id)
}

// builtin returns the module a bare builtin name stands for, or an error for
// every Node builtin the CLI does not offer (fs, child_process, http, …).
func (l *loader) builtin(id, from string) (goja.Value, bool, error) {
	name := strings.TrimPrefix(id, "node:")
	if name == pathModuleName && !l.jit {
		return l.rt.pathModule(), true, nil
	}
	if isNodeBuiltin(name) || strings.HasPrefix(id, "node:") {
		// Only "path" is offered (and none to JiT code).
		return nil, true, notFound(id)
	}
	return nil, false, nil
}

// require loads id for a module in dir; from names that module in messages.
func (l *loader) require(dir, id, from string) (goja.Value, error) {
	if v, ok, err := l.builtin(id, from); ok {
		return v, err
	}
	if id == coreModuleName {
		return l.rt.coreExports, nil
	}
	if l.jit && !isRelative(id) && !strings.HasPrefix(id, "/") && !strings.HasPrefix(id, "@dataform/") {
		return nil, notFound(id) // JiT code may require only @dataform packages and project files
	}
	file, err := l.resolve(dir, id, from)
	if err != nil {
		return nil, err
	}
	return l.load(file)
}

// load runs the module in file once and returns its exports.
func (l *loader) load(file string) (goja.Value, error) {
	vm := l.rt.vm
	if m, ok := l.modules[file]; ok {
		return m.Get("exports"), nil
	}
	r, _ := l.rel(file)
	raw, err := l.files.ReadFile(r)
	if err != nil {
		return nil, &moduleError{msg: fmt.Sprintf("Cannot read '%s': %v", r, err)}
	}
	if l.onRead != nil {
		l.onRead(r, raw)
	}
	l.loads++
	text := decodeUTF8(raw)

	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	_ = module.Set("id", file)
	_ = module.Set("filename", file)
	_ = module.Set("loaded", false)
	_ = module.Set("path", path.Dir(file))
	l.modules[file] = module

	if strings.HasSuffix(file, ".json") {
		v, err := l.rt.jsonParse(goja.Undefined(), vm.ToValue(text))
		if err != nil {
			delete(l.modules, file)
			return nil, err
		}
		_ = module.Set("exports", v)
		_ = module.Set("loaded", true)
		return v, nil
	}

	code := text
	if !l.jit && !l.plain {
		var err error
		if code, err = l.transpile(text, file); err != nil {
			delete(l.modules, file)
			return nil, err
		}
	}
	// compileModule, not goja.Compile: arrow functions' toString() text
	// (funcsource.go); through the process's cache of compiled modules.
	prog, err := modulePrograms.compile(file, wrapModule(code))
	if err != nil {
		delete(l.modules, file)
		return nil, syntaxError(file, r, code, err)
	}
	fnVal, err := vm.RunProgram(prog)
	if err != nil {
		delete(l.modules, file)
		return nil, err
	}
	fn, _ := goja.AssertFunction(fnVal)
	dir := path.Dir(file)
	l.rt.files = append(l.rt.files, file)
	_, err = fn(exports, exports, l.requireFunc(dir, r), module, vm.ToValue(file), vm.ToValue(dir))
	l.rt.files = l.rt.files[:len(l.rt.files)-1]
	if err != nil {
		delete(l.modules, file)
		return nil, err
	}
	_ = module.Set("loaded", true)
	return module.Get("exports"), nil
}

// transpile is core's compiler(text, file), memoized (see transpile.go).
// JavaScript files are passed through core's compiler uncached: it returns
// them unchanged, and hashing them would cost more than the call.
func (l *loader) transpile(text, file string) (string, error) {
	vm := l.rt.vm
	if strings.HasSuffix(file, ".js") {
		out, err := l.rt.compiler(goja.Undefined(), vm.ToValue(text), vm.ToValue(file))
		if err != nil {
			return "", err
		}
		return out.String(), nil
	}
	key := transpileKey(l.rt.bundle.digest, file, text)
	if out, ok := transpiles.get(key); ok {
		return out, nil
	}
	out, err := l.rt.compiler(goja.Undefined(), vm.ToValue(text), vm.ToValue(file))
	if err != nil {
		return "", err
	}
	code := out.String()
	transpiles.put(key, code)
	return code, nil
}

// requireFunc is the `require` handed to a module in dir.
func (l *loader) requireFunc(dir, from string) goja.Value {
	vm := l.rt.vm
	req := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		id, ok := call.Argument(0).Export().(string)
		if !ok {
			panic(vm.NewTypeError(`The "id" argument must be of type string. Received ` + call.Argument(0).String()))
		}
		v, err := l.require(dir, id, from)
		if err != nil {
			l.rt.throw(err)
		}
		return v
	}).(*goja.Object)
	_ = req.Set("resolve", func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).String()
		if _, ok, err := l.builtin(id, from); ok {
			if err != nil {
				l.rt.throw(err)
			}
			return vm.ToValue(id)
		}
		f, err := l.resolve(dir, id, from)
		if err != nil {
			l.rt.throw(err)
		}
		return vm.ToValue(f)
	})
	return req
}

// syntaxError words a goja compile error of code, the module in filename
// (rel: relative to the project), like an engine error: the message and the
// position in the file, corrected for the module wrapper that shares the
// file's first line. The position ends the message, where the daemon finds
// it; the stack is laid out as V8 words a syntax error under the CLI (the
// file and line, the line's code, a caret, then the error) without it.
func syntaxError(filename, rel, code string, err error) error {
	msg := err.Error()
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		msg = se.Message
	}
	m := gojaPositionRE.FindStringSubmatch(msg)
	if m == nil {
		return &jsError{ctor: "SyntaxError", msg: msg}
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	if line == 1 {
		col -= len(modulePrefix)
	}
	text := moreErrorsRE.ReplaceAllString(m[4], "")
	src := ""
	if lines := strings.Split(code, "\n"); line >= 1 && line <= len(lines) {
		src = strings.TrimSuffix(lines[line-1], "\r")
	}
	stack := fmt.Sprintf("%s:%d\n%s\n%s^\n\nSyntaxError: %s", filename, line, src, strings.Repeat(" ", max(col-1, 0)), text)
	return &jsError{ctor: "SyntaxError", msg: fmt.Sprintf("%s (%s:%d:%d)", text, rel, line, col), stack: stack}
}

var (
	gojaPositionRE = regexp.MustCompile(`^(?s)(.*?): Line (\d+):(\d+) (.*)$`)
	// moreErrorsRE is goja's count of the parse errors after the first;
	// V8 reports the first only.
	moreErrorsRE = regexp.MustCompile(` \(and \d+ more errors?\)$`)
)

// decodeUTF8 decodes file bytes as Node's utf8 reader does: invalid bytes
// become U+FFFD rather than failing the file.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			b = b[1:]
			continue
		}
		sb.Write(b[:n])
		b = b[n:]
	}
	return sb.String()
}

var nodeBuiltins = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`assert async_hooks buffer child_process cluster console constants
		crypto dgram diagnostics_channel dns domain events fs fs/promises http http2 https inspector
		module net os perf_hooks process punycode querystring readline repl stream stream/promises
		string_decoder sys timers tls trace_events tty url util v8 vm wasi worker_threads zlib
		path/posix path/win32 util/types`) {
		nodeBuiltins[n] = true
	}
}

func isNodeBuiltin(name string) bool { return nodeBuiltins[name] }
