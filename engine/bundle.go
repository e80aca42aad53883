package engine

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/dfdtools/dfd/internal/regfile"
)

// Bundle is @dataform/core's bundle.js, compiled once and shared by every
// runtime of that core version (a *goja.Program is safe to share).
type Bundle struct {
	Version string // core's own version, e.g. "3.0.62"
	Path    string // bundle.js on disk

	program *goja.Program // the bundle wrapped as a CommonJS module function
	// split, when set, is the module compiled apart (bundlesplit.go): a
	// function of the CommonJS names returning the module's method, which
	// program's function takes after the CommonJS names.
	split  *goja.Program
	digest string // of the bundle's bytes: keys the transpile cache
	// incremental is set when core's main() has the hooks of
	// incremental compiles (incremental.go).
	incremental bool
}

// bundleKey is what a bundle.js on disk is as far as its stat says.
type bundleKey struct {
	path    string
	size    int64
	modTime int64
}

// The compiled bundles are shared by content: every copy of one core
// (each project's node_modules, dfd's cache) is one program. Keyed by path
// instead, every project copy kept a program of ≈7 MiB (measured) for the
// life of the process: a heap that only grew in a process that compiles
// many project copies in process (the cmd/dfd test binary, whose
// real-project compiles then crossed goja's 1 GiB ceiling although one
// needs ≈170 MiB) or a daemon that sees many projects.
var bundles struct {
	mu    sync.Mutex               // guards the fields below
	files map[bundleKey]string     // a file's content key (see contentKey), by its stat
	m     map[string]*list.Element // content key → element of lru holding a *bundleEntry
	lru   list.List                // most recently used first
}

// maxBundles is how many distinct cores keep their compiled program: a
// process meets few (a daemon, the cores of its projects' node_modules and
// dfd's cache); one evicted is compiled again on next use (≈100 ms).
const maxBundles = 8

// maxBundleFiles bounds the stat → content map (small entries, but one per
// project copy ever loaded).
const maxBundleFiles = 4096

type bundleEntry struct {
	key  string
	once sync.Once
	b    *Bundle
	err  error
}

// contentKey identifies what compiling src for version gives: the version
// selects the patches old cores need.
func contentKey(version string, src []byte) string {
	sum := sha256.Sum256(src)
	return version + ":" + hex.EncodeToString(sum[:])
}

// LoadBundle returns the compiled bundle at path, compiling it on first use
// of its content. version is core's version (from its package.json); it
// selects the fixes that old cores need. The Bundle's Path is path, whoever
// compiled the program first.
func LoadBundle(path, version string) (*Bundle, error) {
	return LoadBundleNotify(path, version, nil)
}

// LoadBundleNotify is LoadBundle; when it compiles the bundle (not cached
// in the process), it first calls compiling with the bundle's digest, the
// key of its transpile-cache entries, so that the caller can Precompile the
// project's modules on another goroutine meanwhile.
func LoadBundleNotify(path, version string, compiling func(digest string)) (*Bundle, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("loading @dataform/core: %w", err)
	}
	fk := bundleKey{path, fi.Size(), fi.ModTime().UnixNano()}
	bundles.mu.Lock()
	key, known := bundles.files[fk]
	bundles.mu.Unlock()
	var src []byte
	if !known || !strings.HasPrefix(key, version+":") {
		if src, err = regfile.ReadFile(path); err != nil {
			return nil, fmt.Errorf("loading @dataform/core: %w", err)
		}
		key = contentKey(version, src)
	}
	bundles.mu.Lock()
	if bundles.files == nil || len(bundles.files) >= maxBundleFiles {
		bundles.files = map[bundleKey]string{}
	}
	bundles.files[fk] = key
	if bundles.m == nil {
		bundles.m = map[string]*list.Element{}
	}
	el, ok := bundles.m[key]
	if ok {
		bundles.lru.MoveToFront(el)
	} else {
		el = bundles.lru.PushFront(&bundleEntry{key: key})
		bundles.m[key] = el
		for bundles.lru.Len() > maxBundles {
			old := bundles.lru.Back()
			bundles.lru.Remove(old)
			delete(bundles.m, old.Value.(*bundleEntry).key)
		}
	}
	e := el.Value.(*bundleEntry)
	bundles.mu.Unlock()
	e.once.Do(func() {
		if src == nil {
			// Known by its stat, but evicted or first asked for by
			// another path with the same stat key: read it now.
			if src, e.err = regfile.ReadFile(path); e.err != nil {
				e.err = fmt.Errorf("loading @dataform/core: %w", e.err)
				return
			}
		}
		e.b, e.err = compileBundleSource(path, version, src, true, compiling)
	})
	if e.err != nil {
		var be *BundleError
		if errors.As(e.err, &be) && be.Path != path {
			// The same damaged content elsewhere: name this file.
			c := *be
			c.Path = path
			return nil, &c
		}
		return nil, e.err
	}
	b := *e.b
	b.Path = path
	return &b, nil
}

// compileBundleNatives compiles the bundle at path as LoadBundle does,
// with or without (for tests that compare the two) the patches that hand
// work with a JavaScript fallback to Go: SQLX (sqlx.go) and protobufjs's
// UTF-8 encoder (utf8write.go).
func compileBundleNatives(path, version string, natives bool) (*Bundle, error) {
	src, err := regfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading @dataform/core: %w", err)
	}
	return compileBundleSource(path, version, src, natives, nil)
}

// compileBundleSource is compileBundleNatives of src, read from path;
// compiling, when set, is told the digest before the compile starts (see
// LoadBundleNotify).
func compileBundleSource(path, version string, src []byte, natives bool, compiling func(digest string)) (*Bundle, error) {
	code, sqlx := patchBundle(version, src, natives)
	code, incr := patchIncremental(code)
	digest := contentKey(version, src)
	if sqlx != SQLXInCore {
		// Go's lexer follows JavaScript where goja's regexps do not (see
		// gojaRegexpsDiffer): results cached from core's own lexer in goja
		// may differ, so they are not reused.
		digest += ":sqlx-go"
	}
	if compiling != nil {
		compiling(digest)
	}
	if s, ok := splitBundle(code); ok {
		if prog, mod, err := compileSplit(path, s); err == nil {
			return &Bundle{Version: version, Path: path, program: prog, split: mod, digest: digest, incremental: incr}, nil
		}
		// Not the expected shape, or a damaged bundle: the whole
		// compile below says what is wrong with it.
	}
	prog, err := goja.Compile(path, wrapModule(code), false)
	if err != nil {
		return nil, &BundleError{Path: path, Version: version, Err: err}
	}
	return &Bundle{Version: version, Path: path, program: prog, digest: digest, incremental: incr}, nil
}

// patchBundle applies the rewrites that version's bundle source needs
// (natives: also those that hand work to Go) and says where SQLX is
// handled.
func patchBundle(version string, src []byte, natives bool) (string, SQLXLevel) {
	code := string(src)
	if versionLess(version, "3.0.57") {
		code = patchOldCallerFile(code)
	}
	sqlx := SQLXInCore
	if natives {
		code, sqlx = patchSQLX(code) // first: it recognises core's unpatched SQLX code
	}
	code = patchQuadraticConcat(code)
	code, _ = patchTargetStringifier(code)
	code = patchUTF8Read(code)
	if natives {
		code = patchUTF8Write(code)
	}
	return code, sqlx
}

// load runs the bundle's programs in vm and returns its module function,
// to be called with the CommonJS arguments (exports as this, exports,
// require, module, __filename, __dirname).
func (b *Bundle) load(vm *goja.Runtime) (goja.Callable, error) {
	v, err := vm.RunProgram(b.program)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("the bundle's wrapper is not a function")
	}
	if b.split == nil {
		return fn, nil
	}
	v, err = vm.RunProgram(b.split)
	if err != nil {
		return nil, err
	}
	moduleFn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("the bundle's split wrapper is not a function")
	}
	return func(this goja.Value, args ...goja.Value) (goja.Value, error) {
		method, err := moduleFn(this, args...)
		if err != nil {
			return nil, err
		}
		return fn(this, append(args[:len(args):len(args)], method)...)
	}, nil
}

// BundleError is a core's bundle.js that cannot be the file npm installed:
// it does not compile, or it defines no compiler(). Every published 3.x
// core compiles, so such a file is damaged, most often truncated by an
// interrupted install. Callers that know where the core came from add how
// to reinstall it (compile.Run); the message alone names the file.
type BundleError struct {
	Path    string // the bundle.js
	Version string // the core's version, from its package.json
	// NoCompiler is set when the bundle compiled and ran but exports no
	// compiler(): a damaged file, or a core that is not 3.x.
	NoCompiler bool
	Err        error // what the engine said; nil with NoCompiler
}

func (e *BundleError) Error() string {
	if e.NoCompiler {
		return fmt.Sprintf("@dataform/core %s: %s exports no compiler(): the file is truncated or corrupt, or not a 3.x core's", e.Version, e.Path)
	}
	// goja's syntax errors repeat the file name: "SyntaxError: <path>: Line …".
	detail := strings.Replace(fmt.Sprint(e.Err), e.Path+": ", "", 1)
	return fmt.Sprintf("@dataform/core %s: %s looks truncated or corrupt: it does not compile (%s)", e.Version, e.Path, detail)
}

func (e *BundleError) Unwrap() error { return e.Err }

// Cores before 3.0.57 find the file that defines an action only from V8 call
// sites, which a sandbox does not give them. The official CLI rewrites the
// same minified statement to fall back to __dataform_current_file; so do we,
// so that old cores behave as they do under the CLI.
func patchOldCallerFile(code string) string {
	const old = `if(!t)throw new Error("Unable to find valid caller file; please report this issue.")`
	const patched = `if(!t){if(global.__dataform_current_file){t=global.__dataform_current_file}` +
		`else{throw new Error("Unable to find valid caller file; please report this issue.")}}`
	return replaceOnce(code, old, patched)
}

// V8 concatenates strings as ropes; goja copies. Core's SQLX parser builds
// each run of SQL text by appending token after token to one string, and
// splits statements the same way, which is quadratic in goja: a 300 KB file
// took 10 s and a 10 MB file did not finish in 5 minutes. These rewrites of
// the minified bundle keep the same results but collect the pieces in arrays
// and join them once. Each applies only where its exact text is found, so an
// unknown core is left as it is (slow on huge files, but correct); parity
// tests against the CLI cover every core version we test.
var concatPatches = []struct{ old, new string }{
	{ // SyntaxTreeNode.push: merge adjacent strings lazily.
		old: `push(e){return this.allChildren.length>0&&"string"==typeof e&&"string"==typeof this.allChildren[this.allChildren.length-1]?(this.allChildren[this.allChildren.length-1]=this.allChildren[this.allChildren.length-1]+e,this):(this.allChildren.push(e),this)}`,
		new: `push(e){const c=this.allChildren;if(c.length>0&&"string"==typeof e&&"string"==typeof c[c.length-1]){(this.__dfdRun||(this.__dfdRun=[c[c.length-1]])).push(e);return this}this.__dfdFlush();c.push(e);return this}` +
			`__dfdFlush(){if(this.__dfdRun){this.allChildren[this.allChildren.length-1]=this.__dfdRun.join("");this.__dfdRun=void 0}}`,
	},
	{old: `children(){return this.allChildren.slice()}`, new: `children(){this.__dfdFlush();return this.allChildren.slice()}`},
	{old: `concatenate(e){const t=`, new: `concatenate(e){this.__dfdFlush();const t=`},
	{old: `equals(e){return this.type===e.type&&`, new: `equals(e){this.__dfdFlush();"function"==typeof e.__dfdFlush&&e.__dfdFlush();return this.type===e.type&&`},
}

// createEscapedStatements: results[last] += piece, for every node.
var escapedStatementsRE = mustPrefixedRE(`const t=\[""\];return e\.forEach\(\(e=>\{("string"==typeof e\|\|e\.type!==[a-zA-Z_$][\w$]*\.SyntaxTreeNodeType\.SQL_STATEMENT_SEPARATOR)\?t\[t\.length-1\]\+=(function\(e\)\{return"string"==typeof e\?[^{}]*\}\(e\)):t\.push\(""\)\}\)\),t\}`)

func patchQuadraticConcat(code string) string {
	// Only patch when every piece of the SyntaxTreeNode rewrite matches
	// once, so that no half-patched class can exist.
	var edits []textEdit
	for _, p := range concatPatches {
		i := indexOnce(code, p.old)
		if i < 0 {
			edits = nil
			break
		}
		edits = append(edits, textEdit{i, i + len(p.old), p.new})
	}
	for _, m := range escapedStatementsRE.findAll(code, -1) {
		edits = append(edits, textEdit{m[0], m[1], string(escapedStatementsRE.ExpandString(nil, escapedStatementsPatched, code, m))})
	}
	// The pieces are apart in every core (applyEdits refuses overlaps, and
	// TestConcatPatchesApply checks that it applied them).
	return applyEdits(code, edits)
}

const escapedStatementsPatched = `const t=[[]];return e.forEach((e=>{${1}?t[t.length-1].push(${2}):t.push([])})),t.map((p=>p.join("")))}`

// wrapModule turns CommonJS source into a function expression. The source
// starts on the wrapper's first line so that line numbers in errors are the
// file's own.
func wrapModule(code string) string {
	return modulePrefix + code + moduleSuffix
}

// commonJSParams are the names a CommonJS module's code is given.
const commonJSParams = "exports, require, module, __filename, __dirname"

const (
	modulePrefix = "(function (" + commonJSParams + ") {"
	moduleSuffix = "\n})"
)

// versionLess compares dotted numeric versions; pre-release tags are ignored.
func versionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < 3; i++ {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func versionParts(v string) [3]int {
	var out [3]int
	v, _, _ = strings.Cut(v, "-")
	for i, p := range strings.SplitN(v, ".", 3) {
		n, _ := strconv.Atoi(p)
		out[i] = n
	}
	return out
}
