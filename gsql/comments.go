package gsql

import (
	"sort"
	"strings"
)

// GoogleSQL's formatter (Unparse) prints the parse tree, which has no
// comments. FormatSQL therefore formats the text with its comments blanked
// out and puts each comment back where it stood relative to the code: a
// comment that followed a token on its line (a trailing comment) goes after
// that token's counterpart in the formatted text; a comment on a line of
// its own goes on a line of its own before the counterpart of the token it
// preceded. The code tokens of both texts are aligned by alignTokens, so the
// anchor is exact; what could still go wrong (a -- comment that would swallow
// code) is caught by checking the result's tokens against the formatted
// code and the original comments.

// sqlComment is a comment of the original text and where it stands.
type sqlComment struct {
	tok Token
	// before is the index of the code token the comment precedes
	// (len(code) after the last one).
	before int
	// trailing: on the line of the code token before it (directly or after
	// other trailing comments).
	trailing bool
	// sep is the text between the previous token (code or comment) and the
	// comment; blank reports a blank line in it.
	sep   string
	blank bool
}

type commentSplit struct {
	// stripped is the text with every comment replaced by spaces (a block
	// comment keeps its line breaks), so that code offsets are unchanged.
	stripped string
	code     []Token
	comments []sqlComment
}

func splitComments(text string, toks []Token) commentSplit {
	var cs commentSplit
	b := []byte(text)
	prevEnd := 0
	prevTrailing := false // the previous token is code, or a trailing comment
	for _, t := range toks {
		if t.Kind != Comment {
			cs.code = append(cs.code, t)
			prevEnd, prevTrailing = t.End, true
			continue
		}
		sep := text[prevEnd:t.Start]
		c := sqlComment{tok: t, before: len(cs.code), sep: sep, blank: strings.Count(sep, "\n") >= 2}
		c.trailing = len(cs.code) > 0 && prevTrailing && !strings.Contains(sep, "\n")
		cs.comments = append(cs.comments, c)
		for i := t.Start; i < t.End; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
		prevEnd, prevTrailing = t.End, c.trailing
	}
	cs.stripped = string(b)
	return cs
}

func isLineComment(text string, t Token) bool { return text[t.Start] != '/' }

// insertion replaces formatted[at : at+drop] with text.
type insertion struct {
	at, drop int
	text     string
	order    int
}

// placeComments puts the comments of the original text into the formatted
// code.
func placeComments(orig string, cs commentSplit, formatted string, ftoks []Token, align []int) (string, error) {
	byAnchor := map[int][]sqlComment{}
	for _, c := range cs.comments {
		byAnchor[c.before] = append(byAnchor[c.before], c)
	}
	// inverse[j] is the code token whose counterpart is ftoks[j], or -1
	// for a token the formatter spelled out.
	inverse := make([]int, len(ftoks))
	for j := range inverse {
		inverse[j] = -1
	}
	for i, j := range align {
		inverse[j] = i
	}
	lineStart := func(at int) int { return strings.LastIndexByte(formatted[:at], '\n') + 1 }
	indentOf := func(at int) string {
		ls := lineStart(at)
		e := ls
		for e < len(formatted) && (formatted[e] == ' ' || formatted[e] == '\t') {
			e++
		}
		return formatted[ls:e]
	}
	var ins []insertion
	order := 0
	add := func(at, drop int, text string) {
		ins = append(ins, insertion{at, drop, text, order})
		order++
	}
	anchors := make([]int, 0, len(byAnchor))
	for k := range byAnchor {
		anchors = append(anchors, k)
	}
	sort.Ints(anchors)
	for _, k := range anchors {
		group := byAnchor[k]
		var trail, own []sqlComment
		trailAt := -1   // the trailing comments' insertion, if any
		trailText := "" // its comments, without the line break it may add
		for _, c := range group {
			if c.trailing {
				trail = append(trail, c)
			} else {
				own = append(own, c)
			}
		}
		if len(trail) > 0 {
			var b strings.Builder
			for i, c := range trail {
				if i == 0 {
					b.WriteByte(' ')
				} else {
					b.WriteString(c.sep)
				}
				b.WriteString(orig[c.tok.Start:c.tok.End])
			}
			trailText = b.String()
			j := align[k-1]
			// A trailing comment after a token that the formatter follows
			// with a comma or semicolon on the same line goes after those:
			// `a -- why` before `, b` becomes `a, -- why`.
			for len(own) == 0 && j+1 < len(ftoks) && isListPunct(formatted, ftoks[j+1]) &&
				!strings.Contains(formatted[ftoks[j].End:ftoks[j+1].Start], "\n") {
				i := inverse[j+1]
				if i < 0 || (i != k && len(byAnchor[i]) > 0) || len(byAnchor[i+1]) > 0 {
					break
				}
				j++
			}
			at := ftoks[j].End
			rest := formatted[at:]
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				rest = rest[:nl]
			}
			if isLineComment(orig, trail[len(trail)-1].tok) && strings.TrimSpace(rest) != "" {
				// The code after it on the line moves to the next line.
				drop := len(rest) - len(strings.TrimLeft(rest, " \t"))
				add(at, drop, trailText+"\n"+indentOf(at))
			} else {
				add(at, 0, trailText)
			}
			trailAt = len(ins) - 1
		}
		if len(own) == 0 {
			continue
		}
		var lines []string
		for i, c := range own {
			text := orig[c.tok.Start:c.tok.End]
			if i == 0 || strings.Contains(c.sep, "\n") {
				if c.blank && (i > 0 || k > 0) {
					lines = append(lines, "")
				}
				lines = append(lines, text)
			} else {
				lines[len(lines)-1] += c.sep + text
			}
		}
		if k == len(align) {
			// After the last token: on lines of their own at the end.
			prefix := "\n"
			if strings.HasSuffix(formatted, "\n") {
				prefix = ""
			}
			add(len(formatted), 0, prefix+strings.Join(lines, "\n"))
			continue
		}
		at := ftoks[align[k]].Start
		ls := lineStart(at)
		ind := indentOf(at)
		// A blank line the formatted text already has is enough.
		if len(lines) > 0 && lines[0] == "" && (ls == 0 || strings.HasSuffix(formatted[:ls], "\n\n")) {
			lines = lines[1:]
		}
		var b strings.Builder
		writeLines := func() {
			for _, l := range lines {
				if l != "" {
					b.WriteString(ind + l)
				}
				b.WriteByte('\n')
			}
		}
		if strings.TrimLeft(formatted[ls:at], " \t") == "" {
			writeLines()
			add(ls, 0, b.String())
			continue
		}
		// The token is in the middle of a line: break the line before it.
		ws := at
		for ws > ls && (formatted[ws-1] == ' ' || formatted[ws-1] == '\t') {
			ws--
		}
		b.WriteByte('\n')
		writeLines()
		b.WriteString(ind)
		if trailAt >= 0 && ins[trailAt].at == ws {
			// Trailing comments end the line this breaks: one insertion.
			ins[trailAt].drop = at - ws
			ins[trailAt].text = trailText + b.String()
			continue
		}
		add(ws, at-ws, b.String())
	}
	sort.SliceStable(ins, func(a, b int) bool {
		if ins[a].at != ins[b].at {
			return ins[a].at < ins[b].at
		}
		return ins[a].order < ins[b].order
	})
	var out strings.Builder
	last := 0
	for _, in := range ins {
		if in.at < last {
			return "", &FormatError{in.at, "the SQL's comments cannot be placed safely; it was left as written"}
		}
		out.WriteString(formatted[last:in.at])
		out.WriteString(in.text)
		last = in.at + in.drop
	}
	out.WriteString(formatted[last:])
	res := out.String()
	if err := checkComments(orig, cs, formatted, ftoks, res); err != nil {
		return "", err
	}
	return res, nil
}

func isListPunct(s string, t Token) bool {
	return t.Kind == Punct && (s[t.Start:t.End] == "," || s[t.Start:t.End] == ";")
}

// checkComments makes sure the result is the formatted code, token for
// token, with the original's comments, byte for byte and in order — that
// no -- comment swallowed code.
func checkComments(orig string, cs commentSplit, formatted string, ftoks []Token, res string) error {
	rtoks, err := Tokens(res)
	if err != nil {
		return &FormatError{0, "the SQL's comments cannot be placed safely (" + err.Error() + "); it was left as written"}
	}
	j, c := 0, 0
	for _, t := range rtoks {
		got := res[t.Start:t.End]
		if t.Kind == Comment {
			if c >= len(cs.comments) || got != orig[cs.comments[c].tok.Start:cs.comments[c].tok.End] {
				return &FormatError{0, "the SQL's comments cannot be placed safely; it was left as written"}
			}
			c++
			continue
		}
		if j >= len(ftoks) || got != formatted[ftoks[j].Start:ftoks[j].End] {
			at := 0
			if c > 0 {
				at = cs.comments[c-1].tok.Start
			}
			return &FormatError{at, "a comment would swallow code after formatting; the SQL was left as written"}
		}
		j++
	}
	if j != len(ftoks) || c != len(cs.comments) {
		return &FormatError{0, "the SQL's comments cannot be placed safely; it was left as written"}
	}
	return nil
}
