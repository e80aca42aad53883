package adapters

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible returns s with every character that a terminal or an editor
// would not show as itself made visible, so that a call list shows what
// ran: C0 control characters (but newline and tab) as their Unicode
// control pictures (a carriage return is "␍", NUL "␀", DEL "␡"), and other
// invisible or direction-changing characters — C1 controls, format
// characters such as zero-width spaces, the byte-order mark and bidi
// overrides, line and paragraph separators, spaces other than U+0020 — as
// "⟨U+202E⟩". Invalid UTF-8 bytes become "⟨0xFF⟩". A statement "SELECT 1
// --\r; DROP TABLE t" shows as "SELECT 1 --␍; DROP TABLE t": a terminal
// would have printed the carriage return and hidden the start of the line.
func Visible(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || hidden(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
		case !hidden(r):
			b.WriteString(s[i : i+n])
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7F:
			b.WriteRune('␡')
		default:
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		}
		i += n
	}
	return b.String()
}

// hidden: characters Visible replaces.
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7F:
		return true
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case unicode.Is(unicode.Zs, r) && r != ' ':
		return true
	}
	return false
}
