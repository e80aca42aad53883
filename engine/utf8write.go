package engine

import (
	"strings"

	"github.com/dop251/goja"
)

// protobufjs encodes strings in JavaScript when there is no Node Buffer, as
// in goja: utf8.length(s) and utf8.write(s, buffer, offset) walk s with
// charCodeAt, and in goja each charCodeAt on a primitive string boxes it
// into a String object first. Encoding the compiled graph of a project with
// a 10 MB query took 10 s of a 14 s compile. Every core bundles the same
// two functions (under different local names); they are patched to hand
// strings and Uint8Arrays to Go, which encodes the same UTF-16 code units
// to the same bytes (lone surrogates as three bytes, as protobufjs does).
// Anything else (an Array buffer, an offset that is not a small
// non-negative integer) runs the JavaScript as before.

// The functions, by canonicalFingerprint of their text from ".length=" or
// ".write=" to the end of the body (which has no braces).
const (
	utf8LengthFingerprint = "97586ba4433f5ca1351623413e55146176faf4984db1a5779d54c02f4d5f5a31"
	utf8WriteFingerprint  = "7315aaa5eb2b320918986f1a8f92db592104b167fcd36d4d4bbfd6eb882622f1"
)

var (
	utf8LengthRE = mustPrefixedRE(`\.length=function\(([A-Za-z_$][\w$]*)\)\{for\(var `)
	utf8WriteRE  = mustPrefixedRE(`\.write=function\(([A-Za-z_$][\w$]*),([A-Za-z_$][\w$]*),([A-Za-z_$][\w$]*)\)\{for\(var `)
)

// patchUTF8Write makes protobufjs's utf8.length and utf8.write call Go
// (each only when it is the known function, and found once).
func patchUTF8Write(code string) string {
	code = patchFunctionHead(code, utf8LengthRE, utf8LengthFingerprint, func(p []string) string {
		return `if("string"==typeof ` + p[0] + `&&"function"==typeof __dfdUtf8Length)return __dfdUtf8Length(` + p[0] + `);`
	})
	return patchFunctionHead(code, utf8WriteRE, utf8WriteFingerprint, func(p []string) string {
		s, buf, off := p[0], p[1], p[2]
		return `if("string"==typeof ` + s + `&&` + buf + ` instanceof Uint8Array&&` + off + `===(` + off + `>>>0)&&` +
			`"function"==typeof __dfdUtf8Write)return __dfdUtf8Write(` + s + `,` + buf + `,` + off + `);`
	})
}

// patchFunctionHead inserts call(params) at the start of the one function
// that head matches whose text (up to its first '}') has fingerprint.
func patchFunctionHead(code string, head prefixedRE, fingerprint string, call func(params []string) string) string {
	at := -1
	var params []string
	for _, m := range head.findAll(code, -1) {
		end := strings.IndexByte(code[m[1]:], '}')
		if end < 0 || canonicalFingerprint(code[m[0]:m[1]+end+1]) != fingerprint {
			continue
		}
		if at >= 0 {
			return code // twice: not the code we know
		}
		at = m[1] - len("for(var ")
		params = nil
		for k := 2; k < len(m); k += 2 {
			params = append(params, code[m[k]:m[k+1]])
		}
	}
	if at < 0 {
		return code
	}
	return code[:at] + call(params) + code[at:]
}

// installUTF8Write defines the read-only globals __dfdUtf8Length(string)
// and __dfdUtf8Write(string, uint8Array, offset) the patched functions
// call.
func (r *Runtime) installUTF8Write() {
	vm := r.vm
	g := vm.GlobalObject()
	length := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		s, ok := call.Argument(0).(goja.String)
		if !ok {
			panic(vm.NewTypeError("__dfdUtf8Length: not a string"))
		}
		return vm.ToValue(protobufUTF8Length(s))
	})
	write := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		s, ok := call.Argument(0).(goja.String)
		buf, ok2 := call.Argument(1).Export().([]byte)
		off := call.Argument(2).ToInteger()
		if !ok || !ok2 || off < 0 {
			panic(vm.NewTypeError("__dfdUtf8Write: bad arguments"))
		}
		return vm.ToValue(protobufUTF8Write(s, buf, int(off)))
	})
	_ = g.DefineDataProperty("__dfdUtf8Length", length, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	_ = g.DefineDataProperty("__dfdUtf8Write", write, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}

// protobufUTF8Length is protobufjs's utf8.length: the UTF-8 length of s,
// a lone surrogate counting three bytes.
func protobufUTF8Length(s goja.String) int {
	n := s.Length()
	if _, ok := asciiString(s); ok {
		return n
	}
	total := 0
	for i := 0; i < n; i++ {
		switch c := s.CharAt(i); {
		case c < 0x80:
			total++
		case c < 0x800:
			total += 2
		case c&0xFC00 == 0xD800 && i+1 < n && s.CharAt(i+1)&0xFC00 == 0xDC00:
			i++
			total += 4
		default:
			total += 3
		}
	}
	return total
}

// protobufUTF8Write is protobufjs's utf8.write: it encodes s into buf from
// offset, dropping bytes past the end of buf as a Uint8Array does, and
// returns the number of bytes encoded.
func protobufUTF8Write(s goja.String, buf []byte, offset int) int {
	o := offset
	put := func(b byte) {
		if o < len(buf) {
			buf[o] = b
		}
		o++
	}
	n := s.Length()
	if str, ok := asciiString(s); ok {
		if offset < len(buf) {
			copy(buf[offset:], str)
		}
		return n
	}
	for i := 0; i < n; i++ {
		c := int(s.CharAt(i))
		switch {
		case c < 0x80:
			put(byte(c))
		case c < 0x800:
			put(byte(c>>6 | 192))
			put(byte(c&63 | 128))
		case c&0xFC00 == 0xD800 && i+1 < n && s.CharAt(i+1)&0xFC00 == 0xDC00:
			c = 0x10000 + (c&0x3FF)<<10 + int(s.CharAt(i+1))&0x3FF
			i++
			put(byte(c>>18 | 240))
			put(byte(c>>12&63 | 128))
			put(byte(c>>6&63 | 128))
			put(byte(c&63 | 128))
		default:
			put(byte(c>>12 | 224))
			put(byte(c>>6&63 | 128))
			put(byte(c&63 | 128))
		}
	}
	return o - offset
}
