package compile

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// The graph core returns keeps what dfd's engines know about an error: a
// syntax error's position at the end of its message ("… (definitions/a.js:
// 3:7)"), where the daemon finds it, and the engine's own stack frames
// (goja's, with Go functions among them, or V8's), from which the daemon
// takes positions of other errors. `dataform compile --json` prints them as
// vm2 leaves them under the official CLI instead; CLIGraphWire rewrites a
// graph into that form for printing.

// Field numbers of dataform.CompiledGraph.graph_errors,
// GraphErrors.compilation_errors and CompilationError.message/stack.
const (
	graphErrorsField       = 7
	compilationErrorsField = 1
	errorMessageField      = 2
	errorStackField        = 3
)

// cliStackFrames is the number of frames vm2 gives an error made inside its
// sandbox (V8's Error.stackTraceLimit; the CLI's compile always runs deeper
// than that), each written as "    at CallSite {}" since vm2 hides them.
const cliStackFrames = 10

var (
	posSuffixRE = regexp.MustCompile(`\s\([^()\s]+:\d+:\d+\)$`)
	frameLineRE = regexp.MustCompile(`\n(\tat |    at )`)
)

// CLIGraphWire returns graphWire (an encoded dataform.CompiledGraph, as
// core encoded it) with each compilation error's message and stack as the
// official CLI prints them:
//
//   - a syntax error's message without the position dfd adds (its stack is
//     already V8's: file:line, the line and a caret, then the error);
//   - an error thrown in the sandbox (by core or by project code) has the
//     stack vm2 gives it: "Name: message" and ten "    at CallSite {}";
//   - vm2's own VMError ("Cannot find module 'x'") keeps only its first
//     line: under the CLI the rest is the host's vm2 frames. The one
//     VMError vm2 makes inside the sandbox, for a "node:" name that is not
//     an allowed builtin (setup-node-sandbox.js's requireImpl), has the
//     sandbox's ten call sites;
//   - a stack without frames (set by project code) is left as it is.
//
// Every other byte is kept, so the printed graph is otherwise unchanged.
func CLIGraphWire(graphWire []byte) ([]byte, error) {
	out, changed, err := rewriteField(graphWire, graphErrorsField, func(ge []byte) ([]byte, bool, error) {
		return rewriteField(ge, compilationErrorsField, cliError)
	})
	if err != nil {
		return nil, fmt.Errorf("rewriting the graph's errors: %w", err)
	}
	if !changed {
		return graphWire, nil
	}
	return out, nil
}

// cliError rewrites one encoded CompilationError.
func cliError(b []byte) ([]byte, bool, error) {
	var msg, stack string
	var hasMsg, hasStack bool
	if err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) {
		switch {
		case num == errorMessageField && typ == protowire.BytesType:
			msg, hasMsg = string(v), true
		case num == errorStackField && typ == protowire.BytesType:
			stack, hasStack = string(v), true
		}
	}); err != nil {
		return nil, false, err
	}
	newMsg, newStack := CLIError(msg, stack)
	if newMsg == msg && newStack == stack {
		return b, false, nil
	}
	var out []byte
	err := eachRawField(b, func(num protowire.Number, typ protowire.Type, raw []byte) {
		switch {
		case num == errorMessageField && typ == protowire.BytesType && hasMsg:
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendString(out, newMsg)
		case num == errorStackField && typ == protowire.BytesType && hasStack:
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendString(out, newStack)
		default:
			out = append(out, raw...)
		}
	})
	return out, true, err
}

// CLIError is a compilation error's message and stack as the official CLI
// has them (see CLIGraphWire).
func CLIError(message, stack string) (string, string) {
	if m := posSuffixRE.FindStringIndex(message); m != nil {
		if clean := message[:m[0]]; strings.HasSuffix(stack, "\n\nSyntaxError: "+clean) {
			return clean, stack
		}
	}
	if stack == "" {
		return message, stack
	}
	loc := frameLineRE.FindStringIndex(stack)
	header := ""
	switch {
	case loc != nil:
		header = stack[:loc[0]]
	case strings.HasSuffix(stack, "\n"):
		// goja ends every stack with a newline, also one without frames.
		return message, strings.TrimSuffix(stack, "\n")
	default:
		return message, stack
	}
	if strings.HasPrefix(header, "VMError: ") && !strings.HasPrefix(header, "VMError: Cannot find module 'node:") {
		return message, header
	}
	return message, header + strings.Repeat("\n    at CallSite {}", cliStackFrames)
}

// rewriteField replaces every occurrence of the length-delimited field num
// of the message b by what f makes of it, keeping all other bytes.
func rewriteField(b []byte, num protowire.Number, f func([]byte) ([]byte, bool, error)) ([]byte, bool, error) {
	var out []byte
	changed := false
	var ferr error
	err := eachRawField(b, func(n protowire.Number, typ protowire.Type, raw []byte) {
		if ferr != nil || n != num || typ != protowire.BytesType {
			out = append(out, raw...)
			return
		}
		_, _, tl := protowire.ConsumeTag(raw)
		v, _ := protowire.ConsumeBytes(raw[tl:])
		nv, ch, err := f(v)
		if err != nil {
			ferr = err
			return
		}
		if !ch {
			out = append(out, raw...)
			return
		}
		changed = true
		out = protowire.AppendTag(out, n, typ)
		out = protowire.AppendBytes(out, nv)
	})
	if err == nil {
		err = ferr
	}
	return out, changed, err
}

// eachRawField calls f with every field of b and its raw bytes (tag
// included).
func eachRawField(b []byte, f func(num protowire.Number, typ protowire.Type, raw []byte)) error {
	for len(b) > 0 {
		num, typ, tl := protowire.ConsumeTag(b)
		if tl < 0 {
			return protowire.ParseError(tl)
		}
		vl := protowire.ConsumeFieldValue(num, typ, b[tl:])
		if vl < 0 {
			return protowire.ParseError(vl)
		}
		f(num, typ, b[:tl+vl])
		b = b[tl+vl:]
	}
	return nil
}

// eachField calls f with every field of b and its value (for
// length-delimited fields, the contents).
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte)) error {
	return eachRawField(b, func(num protowire.Number, typ protowire.Type, raw []byte) {
		_, _, tl := protowire.ConsumeTag(raw)
		v := raw[tl:]
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(v)
		}
		f(num, typ, v)
	})
}
