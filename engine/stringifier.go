package engine

// core's JSONObjectStringifier.stringify, the key of every target in the
// graph stage (duplicate names, cycles, dependencies): at 3,000 actions it
// is called tens of thousands of times per compile, and a third of an
// incremental recompile's time went to it, since it builds its sorted copy
// of a target one object per key. The patched one builds one object; each
// value is read once, in the same order, and assigned the same way, so the
// output is the same, but for an own "__proto__" key whose value has a
// toJSON method (the setter makes it the copy's prototype in both, and the
// old code's next copy dropped it again), which no target has. The same
// text in every 3.x core we support.
const (
	targetStringifyOld = `stringify(e){return JSON.stringify(Object.keys(e).sort().reduce(((t,r)=>Object.assign(Object.assign({},t),{[r]:e[r]})),{}))}`
	targetStringifyNew = `stringify(e){const t=Object.keys(e).sort(),r={};for(let n=0;n<t.length;n++)r[t[n]]=e[t[n]];return JSON.stringify(r)}`
)

// patchTargetStringifier speeds up core's target stringifier when its
// source is found exactly once, and says whether it was.
func patchTargetStringifier(code string) (string, bool) {
	i := indexOnce(code, targetStringifyOld)
	if i < 0 {
		return code, false
	}
	return code[:i] + targetStringifyNew + code[i+len(targetStringifyOld):], true
}

// PatchTargetStringifier is patchTargetStringifier for other hosts of core
// (the Node.js worker, which patches the bundle itself).
func PatchTargetStringifier(code string) (string, bool) { return patchTargetStringifier(code) }
