package engine

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/dop251/goja"
)

// ErrMissingDependency is wrapped by ExportedVersion's error when the
// bundle requires a package that is not installed (cores before 3.x
// depend on semver, protobufjs, moo, … from node_modules).
var ErrMissingDependency = errors.New("a module core requires is not installed")

// ExportedVersion loads the core bundle at bundlePath the way the official
// CLI does before it checks the version — require("@dataform/core"), its
// dependencies resolved from node_modules — and returns the `version` it
// exports, "" when it exports none (cores before 2.9.0). Files are read
// only under the directory that holds the node_modules the bundle is in.
//
// It is for cores the CLI refuses (not 3.x), whose exports the CLI prints;
// a 3.x core exports its package version.
func ExportedVersion(bundlePath, version string) (string, error) {
	bundlePath, err := filepath.Abs(bundlePath)
	if err != nil {
		return "", err
	}
	coreDir := filepath.ToSlash(filepath.Dir(bundlePath))
	top := path.Dir(path.Dir(path.Dir(coreDir))) // …/<top>/node_modules/@dataform/core
	b, err := LoadBundle(bundlePath, version)
	if err != nil {
		return "", err
	}
	prelude, _, err := shims()
	if err != nil {
		return "", err
	}
	files, err := OpenDir(filepath.FromSlash(top))
	if err != nil {
		return "", err
	}
	defer files.Close()
	vm := goja.New()
	vm.SetMaxCallStackSize(DefaultMaxCallStackSize)
	r := &Runtime{bundle: b, opts: Options{Root: top}, vm: vm}
	if _, err := vm.RunProgram(prelude); err != nil {
		return "", err
	}
	r.installGlobals()
	jp, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	r.jsonParse = jp
	r.loader = &loader{rt: r, root: top, files: files, plain: true, modules: map[string]*goja.Object{}}
	fn, err := b.load(vm)
	if err != nil {
		return "", err
	}
	module, exports := vm.NewObject(), vm.NewObject()
	_ = module.Set("exports", exports)
	file := coreDir + "/bundle.js"
	r.files = append(r.files, file)
	_, err = fn(exports, exports, r.loader.requireFunc(coreDir, "node_modules/@dataform/core/bundle.js"), module, vm.ToValue(file), vm.ToValue(coreDir))
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			if o, ok := ex.Value().(*goja.Object); ok && o.Get("name") != nil && o.Get("name").String() == "VMError" {
				return "", fmt.Errorf("%w: %s", ErrMissingDependency, o.Get("message"))
			}
		}
		return "", describe(err, "loading @dataform/core")
	}
	v := module.Get("exports").ToObject(vm).Get("version")
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "", nil
	}
	return v.String(), nil
}
