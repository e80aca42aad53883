package graphjson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// This file reproduces the JavaScript value formatting that ends up in the
// output of `dataform compile --json`: ECMAScript Number::toString for
// numbers, JSON.stringify's QuoteJSONString for strings, and the UTF-8
// decoder of protobufjs (@protobufjs/utf8 read) for proto string fields.

const hexLower = "0123456789abcdef"

// appendJSNumber appends the text JSON.stringify produces for the finite
// number f, i.e. ECMAScript Number::toString(f) (ES2024 §6.1.6.1.20).
// NaN and ±Infinity are not valid JSON numbers; callers handle them (the
// CLI prints them as the strings "NaN", "Infinity", "-Infinity").
func appendJSNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-tripping decimal digits, as required by the spec:
	// "k is as small as possible" and, among those, closest to f.
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	mant, exp := s, 0
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' {
			mant = s[:i]
			e, _ := strconv.Atoi(string(s[i+1:]))
			exp = e
			break
		}
	}
	var digits [24]byte
	k := 0
	for _, c := range mant {
		if c != '.' {
			digits[k] = c
			k++
		}
	}
	d := digits[:k]
	n := exp + 1 // decimal point position: value = 0.d × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, d...)
		for i := 0; i < n-k; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := 0; i < -n; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// appendJSDouble appends a float/double field value the way protobufjs
// toObject({json: true}) + JSON.stringify print it: finite numbers as JS
// numbers, non-finite ones as the strings "NaN", "Infinity", "-Infinity".
func appendJSDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return appendJSNumber(dst, f)
}

// appendQuotedUTF8 appends s (valid UTF-8) as a JSON.stringify string
// literal. Only '"', '\\' and C0 controls are escaped; everything else,
// including '<', '>', '&', U+2028/U+2029, DEL and non-ASCII, is literal.
func appendQuotedUTF8(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscapedUnit(dst, uint16(c))
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscapedUnit appends the JSON.stringify escape for a UTF-16 code unit
// that needs one: '"', '\\', a C0 control or a lone surrogate.
func appendEscapedUnit(dst []byte, c uint16) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', hexLower[c>>12], hexLower[c>>8&0xf], hexLower[c>>4&0xf], hexLower[c&0xf])
}

// appendQuotedUnits appends a JavaScript string given as UTF-16 code units as
// a JSON.stringify string literal: valid surrogate pairs become the UTF-8 of
// their code point, lone surrogates are escaped as \udxxx.
func appendQuotedUnits(dst []byte, u []uint16) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c < 0x20 || c == '"' || c == '\\':
			dst = appendEscapedUnit(dst, c)
		case c < 0x80:
			dst = append(dst, byte(c))
		case c >= 0xD800 && c <= 0xDBFF && i+1 < len(u) && u[i+1] >= 0xDC00 && u[i+1] <= 0xDFFF:
			r := 0x10000 + (rune(c)-0xD800)<<10 + (rune(u[i+1]) - 0xDC00)
			dst = utf8.AppendRune(dst, r)
			i++
		case c >= 0xD800 && c <= 0xDFFF:
			dst = appendEscapedUnit(dst, c)
		default:
			dst = utf8.AppendRune(dst, rune(c))
		}
	}
	return append(dst, '"')
}

// appendProtoString appends the proto string field value b as the CLI prints
// it. protobufjs decodes strings with @protobufjs/utf8 read (the CLI decodes
// from a Uint8Array, not a Node Buffer, so Node's own decoder is not used).
// For valid UTF-8 that decoder is exact; for invalid input it is lenient
// and we reproduce it bit for bit (see pbjsDecodeUTF8).
func appendProtoString(dst []byte, b []byte) []byte {
	if utf8.Valid(b) {
		return appendQuotedUTF8(dst, b)
	}
	return appendQuotedUnits(dst, pbjsDecodeUTF8(b))
}

// pbjsDecodeUTF8 is a port of utf8.read from @protobufjs/utf8 1.1.2, which
// protobufjs 7 uses for string fields. Its treatment of invalid input:
//   - a stray continuation byte (0x80-0xBF) is dropped;
//   - a lead byte always consumes 1, 2 or 3 following bytes (for 0xC0-0xDF,
//     0xE0-0xEF, 0xF0-0xFF) without checking that they are continuation
//     bytes; missing bytes past the end count as 0;
//   - the decoded value is U+FFFD if it is overlong (< 0x80, < 0x800,
//     < 0x10000 respectively) or above U+10FFFF, else it is emitted as is;
//     3-byte encodings of surrogates therefore yield (possibly lone)
//     surrogate code units, and 0xF8-0xFF lead bytes use only their low 3
//     bits.
func pbjsDecodeUTF8(b []byte) []uint16 {
	const repl = 0xFFFD
	n := len(b)
	at := func(i int) uint32 {
		if i < n {
			return uint32(b[i] & 0x3F)
		}
		return 0
	}
	out := make([]uint16, 0, n)
	for i := 0; i < n; {
		t := b[i]
		i++
		switch {
		case t <= 0x7F:
			out = append(out, uint16(t))
		case t >= 0xC0 && t < 0xE0:
			c := uint32(t&0x1F)<<6 | at(i)
			i++
			if c >= 0x80 {
				out = append(out, uint16(c))
			} else {
				out = append(out, repl)
			}
		case t >= 0xE0 && t < 0xF0:
			c := uint32(t&0x0F)<<12 | at(i)<<6 | at(i+1)
			i += 2
			if c >= 0x800 {
				out = append(out, uint16(c))
			} else {
				out = append(out, repl)
			}
		case t >= 0xF0:
			c := uint32(t&0x07)<<18 | at(i)<<12 | at(i+1)<<6 | at(i+2)
			i += 3
			if c < 0x10000 || c > 0x10FFFF {
				out = append(out, repl)
			} else {
				c -= 0x10000
				out = append(out, uint16(0xD800+(c>>10)), uint16(0xDC00+(c&0x3FF)))
			}
		default:
			// 0x80-0xBF: not handled by utf8.read, silently dropped.
		}
	}
	return out
}
