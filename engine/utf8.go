package engine

import (
	"github.com/dop251/goja"
)

// Core 3.0.62 bundles a protobufjs whose utf8.read builds every decoded
// string one character at a time (n += String.fromCharCode(o)). V8 makes
// that linear with ropes; goja copies the string each time, so decoding is
// quadratic: a JiT request whose jitCode holds a 200 KB string literal took
// 17 s to decode, and an ExecuteResponse with a long value pays the same.
// (Older cores bundle the chunked decoder, which is linear.) The bundle is
// patched to hand Uint8Array input to protobufUTF8, which decodes the same
// bytes to the same UTF-16 code units in Go, invalid input included.

// The quadratic decoder as minified in core 3.0.62: its head, where the
// patch inserts the call, and its body, which must follow for the patch to
// apply.
const (
	utf8ReadHead = `r.read=function(e,t,r){if(r-t<1)return"";`
	utf8ReadBody = `for(var n="",i=t;i<r;){var o=e[i++];if(o<=127)n+=String.fromCharCode(o);else if(o>=192&&o<224){var a=(31&o)<<6|63&e[i++];n+=a>=128?String.fromCharCode(a):"�"}else if(o>=224&&o<240){var s=(15&o)<<12|(63&e[i++])<<6|63&e[i++];n+=s>=2048?String.fromCharCode(s):"�"}else if(o>=240){var l=(7&o)<<18|(63&e[i++])<<12|(63&e[i++])<<6|63&e[i++];l<65536||l>1114111?n+="�":(l-=65536,n+=String.fromCharCode(55296+(l>>10)),n+=String.fromCharCode(56320+(1023&l)))}}return n}`
	utf8ReadCall = `if(e instanceof Uint8Array&&"function"==typeof __dfdUtf8Read)return __dfdUtf8Read(e,t,r);`
)

// patchUTF8Read makes the quadratic decoder call the native one; the JS
// body stays as the fallback for input that is not a Uint8Array.
func patchUTF8Read(code string) string {
	i := indexOnce(code, utf8ReadHead+utf8ReadBody)
	if i < 0 {
		return code
	}
	at := i + len(utf8ReadHead)
	return code[:at] + utf8ReadCall + code[at:]
}

// installUTF8Read defines the global __dfdUtf8Read(bytes, start, end) the
// patched decoder calls, read-only so that project code cannot replace it.
func (r *Runtime) installUTF8Read() {
	vm := r.vm
	fn := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		var b []byte
		if err := vm.ExportTo(call.Argument(0), &b); err != nil {
			panic(vm.NewTypeError("__dfdUtf8Read: %v", err))
		}
		start := int(call.Argument(1).ToInteger())
		end := int(call.Argument(2).ToInteger())
		return vm.ToValue(goja.StringFromUTF16(protobufUTF8(b, start, end)))
	})
	_ = vm.GlobalObject().DefineDataProperty("__dfdUtf8Read", fn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}

// protobufUTF8 decodes b[start:end] exactly as protobufjs's utf8.read (the
// version in core 3.0.62) does: bytes of a sequence that run past the end
// of b read as 0 (JavaScript's undefined in a bit operation), a
// continuation byte where a sequence should start is dropped, overlong and
// out-of-range sequences become U+FFFD, and surrogates encoded in three
// bytes come through as they are.
func protobufUTF8(b []byte, start, end int) []uint16 {
	if end-start < 1 {
		return nil
	}
	at := func(i int) int {
		if i >= 0 && i < len(b) {
			return int(b[i])
		}
		return 0
	}
	out := make([]uint16, 0, end-start)
	for i := max(start, 0); i < end; {
		if i >= len(b) {
			i++ // undefined: no branch of the JavaScript applies
			continue
		}
		o := int(b[i])
		i++
		switch {
		case o <= 127:
			out = append(out, uint16(o))
		case o >= 192 && o < 224:
			a := (31&o)<<6 | 63&at(i)
			i++
			if a >= 128 {
				out = append(out, uint16(a))
			} else {
				out = append(out, 0xFFFD)
			}
		case o >= 224 && o < 240:
			s := (15&o)<<12 | (63&at(i))<<6 | 63&at(i+1)
			i += 2
			if s >= 2048 {
				out = append(out, uint16(s))
			} else {
				out = append(out, 0xFFFD)
			}
		case o >= 240:
			l := (7&o)<<18 | (63&at(i))<<12 | (63&at(i+1))<<6 | 63&at(i+2)
			i += 3
			if l < 65536 || l > 1114111 {
				out = append(out, 0xFFFD)
			} else {
				l -= 65536
				out = append(out, uint16(55296+(l>>10)), uint16(56320+(1023&l)))
			}
		}
	}
	return out
}
