package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/graphjson"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// What `dfd compile` prints, it prints as the official CLI (@dataform/cli
// 3.0.69) does: every line through its writeStdOut/writeStdErr (a newline
// after each text), in its colours (always, unless NO_COLOR is 1, true or
// yes: the CLI does not look for a terminal), the compiled graph as JSON,
// dot or a summary, then the compilation errors on stderr.

// cliOut writes as the CLI's print helpers do.
type cliOut struct {
	stdout, stderr io.Writer
	color          bool
}

func newCLIOut(env *cmdEnv) cliOut {
	nc := strings.ToLower(env.getenv("NO_COLOR"))
	return cliOut{stdout: env.stdout, stderr: env.stderr, color: nc != "1" && nc != "true" && nc != "yes"}
}

// ANSI colours of the CLI's output helpers.
const (
	cliRed   = 91
	cliGreen = 32
	cliCyan  = 36
)

func (o cliOut) paint(code int, s string) string {
	if !o.color {
		return s
	}
	return fmt.Sprintf("\x1b[%dm%s\x1b[0m", code, s)
}

// write is the CLI's write(stream, text, indentCount).
func write(w io.Writer, text string, indent int) {
	_, _ = io.WriteString(w, strings.Repeat("  ", indent)+text+"\n")
}

func (o cliOut) print(text string)                  { write(o.stdout, text, 0) }
func (o cliOut) printError(text string, indent int) { write(o.stderr, o.paint(cliRed, text), indent) }

// fatal prints an error that ends the command, as the CLI's yargs fail
// handler does: the message's first line after "Dataform encountered an
// error: ", then its stack. An exception of project or core code that
// ends the compile (core's main() threw) has the stack vm2 gives it; any
// VMError "Cannot find module" becomes the CLI's advice to install
// dependencies, whatever module it was. dfd's own errors have no
// JavaScript stack: "Error: " and the whole message take its place, as the
// CLI's host errors print once their host frames are left out.
func (o cliOut) fatal(err error) {
	var ce *project.CLIError
	if errors.As(err, &ce) && ce.Bare {
		o.printError(ce.Message, 0)
		return
	}
	if name, msg, stack, ok := scriptException(err); ok {
		if name == "VMError" && strings.Contains(msg, "Cannot find module") {
			o.printError(compile.MissingDependenciesMessage, 0)
			return
		}
		first, _, _ := strings.Cut(msg, "\n")
		o.printError("Dataform encountered an error: "+first, 0)
		if _, cliStack := compile.CLIError(msg, stack); cliStack != "" {
			o.printError(cliStack, 0)
		}
		return
	}
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	o.printError("Dataform encountered an error: "+first, 0)
	o.printError("Error: "+msg, 0)
}

// exceptionHeadRE is the "Name: " that engines put before an exception's
// message.
var exceptionHeadRE = regexp.MustCompile(`^([A-Za-z_$][\w$]*): `)

// scriptException finds in err a JavaScript exception that escaped the
// compile, on either engine, and returns its name, its message without the
// name, and its stack.
func scriptException(err error) (name, msg, stack string, ok bool) {
	var se *engine.ScriptError
	var we *jit.WorkerError
	switch {
	case errors.As(err, &se):
		msg, stack = se.Message, se.Stack
	case errors.As(err, &we) && we.Code == jit.CodeScript:
		msg, stack = we.Message, we.Stack
	default:
		return "", "", "", false
	}
	m := exceptionHeadRE.FindStringSubmatch(msg)
	if m == nil {
		return "", "", "", false // a thrown value that is not an error
	}
	return m[1], msg[len(m[0]):], stack, true
}

// outputSelection is --output-actions/--output-tags and the two include
// flags: which actions of the graph are printed.
type outputSelection struct {
	actions, tags              []string
	includeDeps, includeDepsOf bool
}

func (s outputSelection) any() bool { return len(s.actions) > 0 || len(s.tags) > 0 }

// Output formats of `dataform compile`.
const (
	formatSummary = "summary"
	formatJSON    = "json"
	formatDot     = "dot"
)

// printCompiled prints a compiled graph in format, pruned to sel when it
// selects anything and the graph has no errors, then the compilation
// errors (after an empty line on stdout), as the CLI's compileAndPrint. It
// reports whether the graph had errors. An error is returned for a
// selection the CLI refuses (an ambiguous name) or a graph that cannot be
// printed.
func printCompiled(o cliOut, res *compile.Result, format string, quiet bool, sel outputSelection, interactive bool) (bool, error) {
	errs := res.Errors()
	var keep map[string]bool
	if sel.any() && len(errs) == 0 {
		var err error
		if keep, err = includedActions(res.Graph, sel); err != nil {
			return false, err
		}
	}
	switch format {
	case formatJSON:
		wire, err := compile.CLIGraphWire(res.GraphWire)
		if err != nil {
			return false, err
		}
		var out []byte
		if keep != nil {
			out, err = prunedJSON(wire, res.Graph, keep)
		} else {
			out, err = graphjson.Marshal((&dataformpb.CompiledGraph{}).ProtoReflect().Descriptor(), wire)
		}
		if err != nil {
			return false, fmt.Errorf("printing the graph: %w", err)
		}
		// prettyJsonStringify ends with a newline, and writeStdOut adds one.
		o.print(string(out))
	case formatDot:
		o.print(dotGraph(o, res.Graph, keep, interactive))
	default:
		printSummaryCLI(o, res.Graph, keep, quiet)
	}
	if len(errs) == 0 {
		return false, nil
	}
	o.print("")
	o.printError("Compilation errors:", 1)
	for _, e := range errs {
		msg, stack := compile.CLIError(e.GetMessage(), e.GetStack())
		text := stack
		if quiet {
			text = msg + " " + quietStack(msg, stack)
		} else if text == "" {
			text = msg
		}
		write(o.stderr, o.paint(cliCyan, e.GetFileName())+": "+o.paint(cliRed, text), 1)
	}
	return true, nil
}

// quietStack is the CLI's formatStackTraceForQuietCompilation: the first
// three lines of the stack of an "Unexpected identifier" error.
func quietStack(msg, stack string) string {
	if !strings.Contains(msg, "Unexpected identifier") || stack == "" {
		return ""
	}
	lines := strings.Split(stack, "\n")
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

// readableTarget is the CLI's targetAsReadableString: database.schema.name.
func readableTarget(t *dataformpb.Target) string {
	if t.GetDatabase() != "" {
		return t.GetDatabase() + "." + t.GetSchema() + "." + t.GetName()
	}
	return t.GetSchema() + "." + t.GetName()
}

type graphAction struct {
	target *dataformpb.Target
	tags   []string
	deps   []*dataformpb.Target
}

// graphActions are the CLI's allActions: tables, operations, assertions.
func graphActions(g *dataformpb.CompiledGraph) []graphAction {
	var out []graphAction
	for _, t := range g.GetTables() {
		out = append(out, graphAction{t.GetTarget(), t.GetTags(), t.GetDependencyTargets()})
	}
	for _, o := range g.GetOperations() {
		out = append(out, graphAction{o.GetTarget(), o.GetTags(), o.GetDependencyTargets()})
	}
	for _, a := range g.GetAssertions() {
		out = append(out, graphAction{a.GetTarget(), a.GetTags(), a.GetDependencyTargets()})
	}
	return out
}

// matchPatterns is the CLI's: a name with a dot must be a full
// database.schema.name; one without matches the last part, and must match
// one action only.
func matchPatterns(patterns, values []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		if strings.Contains(p, ".") {
			for _, v := range values {
				if v == p {
					out = append(out, p)
					break
				}
			}
			continue
		}
		var matches []string
		for _, v := range values {
			if v[strings.LastIndex(v, ".")+1:] == p {
				matches = append(matches, v)
			}
		}
		switch {
		case len(matches) > 1:
			return nil, fmt.Errorf("Ambiguous Action name: %s. Did you mean one of: %s.", p, strings.Join(matches, ", "))
		case len(matches) == 1:
			out = append(out, matches[0])
		}
	}
	return out, nil
}

// includedActions is the CLI's computeIncludedActionNames: the selected
// actions and tags, with their dependencies and/or dependents when asked.
func includedActions(g *dataformpb.CompiledGraph, sel outputSelection) (map[string]bool, error) {
	actions := graphActions(g)
	var names []string
	byName := map[string]graphAction{}
	for _, a := range actions {
		n := readableTarget(a.target)
		if _, ok := byName[n]; !ok {
			names = append(names, n)
		}
		byName[n] = a
	}
	included := map[string]bool{}
	var order []string
	add := func(n string) bool {
		if included[n] {
			return false
		}
		included[n] = true
		order = append(order, n)
		return true
	}
	if len(sel.actions) > 0 {
		matched, err := matchPatterns(sel.actions, names)
		if err != nil {
			return nil, err
		}
		for _, n := range matched {
			add(n)
		}
	}
	if len(sel.tags) > 0 {
		for _, a := range actions {
			for _, tag := range a.tags {
				if contains(sel.tags, tag) {
					add(readableTarget(a.target))
					break
				}
			}
		}
	}
	if sel.includeDeps {
		queue := append([]string(nil), order...)
		for len(queue) > 0 {
			n := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			var deps []string
			for _, d := range byName[n].deps {
				deps = append(deps, readableTarget(d))
			}
			matched, err := matchPatterns(deps, names)
			if err != nil {
				return nil, err
			}
			for _, d := range matched {
				if add(d) {
					queue = append(queue, d)
				}
			}
		}
	}
	if sel.includeDepsOf {
		queue := append([]string(nil), order...)
		for len(queue) > 0 {
			n := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			for _, a := range actions {
				for _, d := range a.deps {
					if readableTarget(d) == n {
						if dn := readableTarget(a.target); add(dn) {
							queue = append(queue, dn)
						}
						break
					}
				}
			}
		}
	}
	return included, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cliGraphArrays are the repeated fields of the CLI's CompiledGraph, in the
// order its constructor creates them: a pruned graph is a plain object
// (Object.assign({}, graph, {…})) whose keys come in that order, then the
// singular fields in the order core wrote them, and whose empty arrays are
// printed. propertyGraphs is not in the protos of the cores dfd reads; it
// is always empty.
var cliGraphArrays = []string{"tables", "operations", "assertions", "declarations", "tests", "notebooks", "dataPreparations", "propertyGraphs", "targets"}

// prunedJSON prints the CLI's pruned graph: wire (a CompiledGraph, g its
// decoded form) with tables, operations, assertions and targets filtered to
// keep, formatted as JSON.stringify(plainObject, null, 4) + "\n".
func prunedJSON(wire []byte, g *dataformpb.CompiledGraph, keep map[string]bool) ([]byte, error) {
	md := g.ProtoReflect().Descriptor()
	type field struct {
		fd    protoreflect.FieldDescriptor
		elems [][]byte // each occurrence, in order
	}
	fields := map[string]*field{}
	var singular []string // JSON names, first occurrence first
	for b := wire; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		val := b[:m]
		b = b[m:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			continue // not a field protobufjs knows, or not one a core writes
		}
		name := fd.JSONName()
		f := fields[name]
		if f == nil {
			f = &field{fd: fd}
			fields[name] = f
			if fd.Cardinality() != protoreflect.Repeated {
				singular = append(singular, name)
			}
		}
		v, _ := protowire.ConsumeBytes(val)
		f.elems = append(f.elems, v)
	}
	// Which elements of the filtered arrays stay, by their decoded target.
	targetsOf := map[string][]*dataformpb.Target{"targets": g.GetTargets()}
	for _, t := range g.GetTables() {
		targetsOf["tables"] = append(targetsOf["tables"], t.GetTarget())
	}
	for _, o := range g.GetOperations() {
		targetsOf["operations"] = append(targetsOf["operations"], o.GetTarget())
	}
	for _, a := range g.GetAssertions() {
		targetsOf["assertions"] = append(targetsOf["assertions"], a.GetTarget())
	}

	var buf bytes.Buffer
	buf.WriteString("{")
	first := true
	key := func(name string) {
		if !first {
			buf.WriteString(",")
		}
		first = false
		buf.WriteString("\n    ")
		buf.WriteString(jsString(name))
		buf.WriteString(": ")
	}
	for _, name := range cliGraphArrays {
		key(name)
		f := fields[name]
		var elems [][]byte
		if f != nil {
			for i, e := range f.elems {
				if ts, filtered := targetsOf[name]; filtered && (i >= len(ts) || !keep[readableTarget(ts[i])]) {
					continue
				}
				elems = append(elems, e)
			}
		}
		if len(elems) == 0 {
			buf.WriteString("[]")
			continue
		}
		buf.WriteString("[")
		for i, e := range elems {
			if i > 0 {
				buf.WriteString(",")
			}
			buf.WriteString("\n        ")
			out, err := graphjson.AppendIndent(nil, f.fd.Message(), e, 2)
			if err != nil {
				return nil, err
			}
			buf.Write(out)
		}
		buf.WriteString("\n    ]")
	}
	for _, name := range singular {
		f := fields[name]
		last := f.elems[len(f.elems)-1]
		switch f.fd.Kind() {
		case protoreflect.MessageKind:
			out, err := graphjson.AppendIndent(nil, f.fd.Message(), last, 1)
			if err != nil {
				return nil, err
			}
			key(name)
			buf.Write(out)
		case protoreflect.StringKind:
			key(name)
			buf.WriteString(jsString(string(last)))
		}
	}
	buf.WriteString("\n}\n")
	return buf.Bytes(), nil
}

// jsString is JSON.stringify of a string (which, unlike encoding/json,
// leaves <, >, &, U+2028 and U+2029 as they are).
func jsString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(out)
}

// tableType is the CLI's tableTypeEnumToString after
// setOrValidateTableEnumType: the enum's name in lower case, taken from the
// legacy type string when the enum is unset.
func tableType(t *dataformpb.Table) string {
	if t.GetEnumType() == dataformpb.TableType_UNKNOWN_TYPE && t.GetType() != "" {
		return t.GetType()
	}
	return strings.ToLower(t.GetEnumType().String())
}

func keepTarget(keep map[string]bool, t *dataformpb.Target) bool {
	return keep == nil || keep[readableTarget(t)]
}

// printSummaryCLI is the CLI's summary (printCompiledGraph without --json
// or --dot), after its "Compiling..." line.
func printSummaryCLI(o cliOut, g *dataformpb.CompiledGraph, keep map[string]bool, quiet bool) {
	var tables []*dataformpb.Table
	for _, t := range g.GetTables() {
		if keepTarget(keep, t.GetTarget()) {
			tables = append(tables, t)
		}
	}
	var assertions []*dataformpb.Assertion
	for _, a := range g.GetAssertions() {
		if keepTarget(keep, a.GetTarget()) {
			assertions = append(assertions, a)
		}
	}
	var operations []*dataformpb.Operation
	for _, op := range g.GetOperations() {
		if keepTarget(keep, op.GetTarget()) {
			operations = append(operations, op)
		}
	}
	o.print(o.paint(cliGreen, fmt.Sprintf("Compiled %d action(s).", len(tables)+len(assertions)+len(operations))))
	target := func(t *dataformpb.Target) string { return o.paint(cliCyan, t.GetSchema()+"."+t.GetName()) }
	disabled := func(d bool) string {
		if d {
			return " [disabled]"
		}
		return ""
	}
	heading := func(n int, what string) {
		end := ":"
		if quiet {
			end = "."
		}
		o.print(fmt.Sprintf("%d %s%s", n, what, end))
	}
	if len(tables) > 0 {
		heading(len(tables), "dataset(s)")
		if !quiet {
			for _, t := range tables {
				write(o.stdout, fmt.Sprintf("%s [%s]%s", target(t.GetTarget()), tableType(t), disabled(t.GetDisabled())), 1)
			}
		}
	}
	if len(assertions) > 0 {
		heading(len(assertions), "assertion(s)")
		if !quiet {
			for _, a := range assertions {
				write(o.stdout, target(a.GetTarget())+disabled(a.GetDisabled()), 1)
			}
		}
	}
	if len(operations) > 0 {
		heading(len(operations), "operation(s)")
		if !quiet {
			for _, op := range operations {
				write(o.stdout, target(op.GetTarget())+disabled(op.GetDisabled()), 1)
			}
		}
	}
}

// dotGraph is the CLI's dotRepresentation; targets are coloured when
// stdout is interactive.
func dotGraph(o cliOut, g *dataformpb.CompiledGraph, keep map[string]bool, interactive bool) string {
	format := func(t *dataformpb.Target) string {
		s := t.GetSchema() + "." + t.GetName()
		if interactive {
			return o.paint(cliCyan, s)
		}
		return s
	}
	var nodes, edges []string
	node := func(t *dataformpb.Target, label string, deps []*dataformpb.Target) {
		name := format(t)
		nodes = append(nodes, `"`+name+`" [label="`+label+`"]`)
		for _, d := range deps {
			edges = append(edges, `"`+format(d)+`" -> "`+name+`"`)
		}
	}
	for _, t := range g.GetTables() {
		if keepTarget(keep, t.GetTarget()) {
			node(t.GetTarget(), format(t.GetTarget())+" ["+tableType(t)+"]", t.GetDependencyTargets())
		}
	}
	for _, a := range g.GetAssertions() {
		if keepTarget(keep, a.GetTarget()) {
			node(a.GetTarget(), format(a.GetTarget()), a.GetDependencyTargets())
		}
	}
	for _, op := range g.GetOperations() {
		if keepTarget(keep, op.GetTarget()) {
			node(op.GetTarget(), format(op.GetTarget()), op.GetDependencyTargets())
		}
	}
	return "digraph {\n" + strings.Join(nodes, ";\n") + ";\n" + strings.Join(edges, ";\n") + ";\n}"
}

// interactiveStdout is the CLI's isInteractive(): stdout a terminal, TERM
// not "dumb", and no CI variable.
func interactiveStdout(env *cmdEnv) bool {
	f, ok := env.stdout.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && env.getenv("TERM") != "dumb" && env.getenv("CI") == ""
}
