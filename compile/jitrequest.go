package compile

// JiT requests: the dataform.JitCompilationRequest the official CLI hands to
// core's jitCompiler for one action of a compiled graph.
//
// What the CLI does (dataform-co/dataform at 757c9d6; @dataform/cli 3.0.69's
// bundle.js and worker_bundle.js run the same code):
//
//   - cli/api/commands/compile.ts:93-94 decodes core's CompiledGraph.
//   - cli/api/commands/build.ts:109-123 (toPartialExecutionAction) makes an
//     ExecutionAction of every table, operation and assertion with the graph's
//     `target` (the effective target, with suffixes and prefix applied — not
//     `canonicalTarget`), `dependencyTargets` as they are, and `jitCode` only
//     when the action is not disabled; build.ts:77-89 sets type "table" and
//     tableType from enumType (after prune.ts:11 setOrValidateTableEnumType),
//     build.ts:73 copies the graph's project-wide `jitData`.
//   - cli/api/commands/run.ts:581-604 (compileJitAction) builds the request:
//     target, dependencies = dependencyTargets, jitCode, compilationTargetType
//     (table → TABLE or INCREMENTAL_TABLE by tableType, operation, assertion)
//     and jitData = the graph's jitData. It sets neither file_paths nor
//     execution_data, so in a CLI run jctx.executionData is null.
//   - cli/api/commands/jit/compiler.ts:60-64 sends it to the worker as JSON
//     (Node's default IPC serialization calls the message's toJSON), and
//     cli/vm/jit_worker.ts:69-70 rebuilds it with fromObject and encodes it.
//     That round trip keeps the order of jitData's keys, which is the order
//     core wrote them in; see EncodeJitRequest.

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// ActionKind is the kind of a compiled action that may carry jitCode.
type ActionKind string

const (
	KindTable       ActionKind = "table"
	KindView        ActionKind = "view"
	KindIncremental ActionKind = "incremental table"
	KindOperation   ActionKind = "operation"
	KindAssertion   ActionKind = "assertion"
)

// TargetType is the compilation target type the CLI sends for this kind
// (run.ts:585-596): views are compiled as tables.
func (k ActionKind) TargetType() dataformpb.JitCompilationTargetType {
	switch k {
	case KindTable, KindView:
		return dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE
	case KindIncremental:
		return dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_INCREMENTAL_TABLE
	case KindOperation:
		return dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_OPERATION
	case KindAssertion:
		return dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_ASSERTION
	}
	return dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_UNSPECIFIED
}

// Action is one table (view, incremental table), operation or assertion of
// a compiled graph, with what a JiT request needs. Its messages are the
// graph's own: treat them as read-only.
type Action struct {
	Kind ActionKind
	// Target is where the action writes, with the project's suffixes and
	// prefix applied; JiT requests carry this one.
	Target *dataformpb.Target
	// CanonicalTarget is the target without overrides.
	CanonicalTarget   *dataformpb.Target
	DependencyTargets []*dataformpb.Target
	// JitCode is empty for actions compiled ahead of time.
	JitCode string
	// JitData is the graph's jitData: core keeps one project-wide Struct
	// (jitData(key, value) in any file), which every JiT action sees as
	// jctx.data. Nil when core wrote none.
	JitData  *structpb.Struct
	FileName string
	Disabled bool
}

// Name is the action's target as Dataform prints it: database.schema.name,
// or schema.name without a database (core/targets.ts targetAsReadableString).
func (a Action) Name() string { return readableTarget(a.Target) }

// TargetType is the compilation target type of the action's kind.
func (a Action) TargetType() dataformpb.JitCompilationTargetType { return a.Kind.TargetType() }

func readableTarget(t *dataformpb.Target) string {
	if t.GetDatabase() == "" {
		return t.GetSchema() + "." + t.GetName()
	}
	return t.GetDatabase() + "." + t.GetSchema() + "." + t.GetName()
}

// candidate is an action found by name, converted to an Action only once
// chosen (so that a malformed action elsewhere in the graph does not get in
// the way).
type candidate struct {
	kind      string // for messages, before the table type is checked
	target    *dataformpb.Target
	canonical *dataformpb.Target
	build     func() (Action, error)
}

func candidates(g *dataformpb.CompiledGraph) []candidate {
	var out []candidate
	jitData := g.GetJitData()
	for _, t := range g.GetTables() {
		out = append(out, candidate{kind: tableKindName(t), target: t.GetTarget(), canonical: t.GetCanonicalTarget(), build: func() (Action, error) {
			kind, err := tableKind(t)
			if err != nil {
				return Action{}, err
			}
			return Action{Kind: kind, Target: t.GetTarget(), CanonicalTarget: t.GetCanonicalTarget(), DependencyTargets: t.GetDependencyTargets(),
				JitCode: t.GetJitCode(), JitData: jitData, FileName: t.GetFileName(), Disabled: t.GetDisabled()}, nil
		}})
	}
	for _, o := range g.GetOperations() {
		out = append(out, candidate{kind: string(KindOperation), target: o.GetTarget(), canonical: o.GetCanonicalTarget(), build: func() (Action, error) {
			return Action{Kind: KindOperation, Target: o.GetTarget(), CanonicalTarget: o.GetCanonicalTarget(), DependencyTargets: o.GetDependencyTargets(),
				JitCode: o.GetJitCode(), JitData: jitData, FileName: o.GetFileName(), Disabled: o.GetDisabled()}, nil
		}})
	}
	for _, a := range g.GetAssertions() {
		out = append(out, candidate{kind: string(KindAssertion), target: a.GetTarget(), canonical: a.GetCanonicalTarget(), build: func() (Action, error) {
			return Action{Kind: KindAssertion, Target: a.GetTarget(), CanonicalTarget: a.GetCanonicalTarget(), DependencyTargets: a.GetDependencyTargets(),
				JitCode: a.GetJitCode(), JitData: jitData, FileName: a.GetFileName(), Disabled: a.GetDisabled()}, nil
		}})
	}
	return out
}

// tableKind mirrors setOrValidateTableEnumType (core/utils.ts:479-493),
// which the CLI applies before it reads a table's type: enumType wins, the
// legacy `type` string fills in when enumType is unset, and the two must not
// disagree.
func tableKind(t *dataformpb.Table) (ActionKind, error) {
	fromString := dataformpb.TableType_UNKNOWN_TYPE
	switch t.GetType() {
	case "":
	case "table":
		fromString = dataformpb.TableType_TABLE
	case "incremental":
		fromString = dataformpb.TableType_INCREMENTAL
	case "view":
		fromString = dataformpb.TableType_VIEW
	default:
		return "", fmt.Errorf("table %s: unexpected table type %q", readableTarget(t.GetTarget()), t.GetType())
	}
	enum := t.GetEnumType()
	if enum == dataformpb.TableType_UNKNOWN_TYPE {
		enum = fromString
	} else if fromString != dataformpb.TableType_UNKNOWN_TYPE && enum != fromString {
		return "", fmt.Errorf("table %s: type %q and enumType %s are not equivalent", readableTarget(t.GetTarget()), t.GetType(), enum)
	}
	switch enum {
	case dataformpb.TableType_TABLE:
		return KindTable, nil
	case dataformpb.TableType_INCREMENTAL:
		return KindIncremental, nil
	case dataformpb.TableType_VIEW:
		return KindView, nil
	}
	return "", fmt.Errorf("table %s has no table type (neither enumType nor type is set)", readableTarget(t.GetTarget()))
}

func tableKindName(t *dataformpb.Table) string {
	if k, err := tableKind(t); err == nil {
		return string(k)
	}
	return "table"
}

// parseActionName splits "name", "schema.name" or "database.schema.name".
// A database may itself contain dots (domain-scoped BigQuery projects such
// as "example.com:analytics"), so everything before the last two parts is
// the database.
func parseActionName(name string) (parts []string, err error) {
	parts = strings.Split(name, ".")
	if len(parts) > 3 {
		parts = []string{strings.Join(parts[:len(parts)-2], "."), parts[len(parts)-2], parts[len(parts)-1]}
	}
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%q is not an action name: use name, schema.name or database.schema.name", name)
		}
	}
	return parts, nil
}

func targetMatches(t *dataformpb.Target, parts []string) bool {
	if t == nil {
		return false
	}
	switch len(parts) {
	case 1:
		return t.GetName() == parts[0]
	case 2:
		return t.GetSchema() == parts[0] && t.GetName() == parts[1]
	default:
		return t.GetDatabase() == parts[0] && t.GetSchema() == parts[1] && t.GetName() == parts[2]
	}
}

// FindAction finds a table (including views and incremental tables),
// operation or assertion of g by plain name, schema.name or
// database.schema.name. The effective target is tried first, then the
// canonical one (so a name still finds its action when the project adds a
// prefix or suffixes). Unlike the CLI's --actions (core/utils.ts
// matchPatterns), schema.name also matches actions that have a database.
func FindAction(g *dataformpb.CompiledGraph, name string) (Action, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Action{}, errors.New("no action name given")
	}
	parts, err := parseActionName(name)
	if err != nil {
		return Action{}, err
	}
	all := candidates(g)
	for _, canonical := range []bool{false, true} {
		var found []candidate
		for _, c := range all {
			t := c.target
			if canonical {
				t = c.canonical
			}
			if targetMatches(t, parts) {
				found = append(found, c)
			}
		}
		switch {
		case len(found) == 1:
			a, err := found[0].build()
			if err != nil {
				return Action{}, fmt.Errorf("finding action %q: %w", name, err)
			}
			return a, nil
		case len(found) > 1:
			names := make([]string, len(found))
			for i, c := range found {
				names[i] = fmt.Sprintf("%s (%s)", readableTarget(c.target), c.kind)
			}
			return Action{}, fmt.Errorf("ambiguous action name %q matches %d actions: %s; give schema.name or database.schema.name",
				name, len(found), strings.Join(names, ", "))
		}
	}
	return Action{}, notFound(g, name, parts, all)
}

// notFound explains a failed lookup: a name that is a declaration or a unit
// test gets said so (neither can be JiT-compiled), anything else gets the
// closest action names.
func notFound(g *dataformpb.CompiledGraph, name string, parts []string, all []candidate) error {
	for _, d := range g.GetDeclarations() {
		if targetMatches(d.GetTarget(), parts) || targetMatches(d.GetCanonicalTarget(), parts) {
			return fmt.Errorf("%s is a declaration, not a table, operation or assertion: it has no SQL to compile", readableTarget(d.GetTarget()))
		}
	}
	for _, t := range g.GetTests() {
		if len(parts) == 1 && t.GetName() == parts[0] || targetMatches(t.GetTarget(), parts) {
			return fmt.Errorf("%q is a unit test: the CLI does not JiT-compile tests", name)
		}
	}
	query := parts[len(parts)-1]
	type scored struct {
		name string
		dist int
	}
	var close []scored
	seen := map[string]bool{}
	for _, c := range all {
		full := readableTarget(c.target)
		if seen[full] {
			continue
		}
		// Both names count: the user may know either.
		q := strings.ToLower(query)
		best, ok := -1, false
		for _, t := range []*dataformpb.Target{c.target, c.canonical} {
			n := strings.ToLower(t.GetName())
			if n == "" {
				continue
			}
			d := editDistance(q, n)
			if d <= max(2, len(q)/3) || strings.Contains(n, q) || strings.Contains(q, n) {
				ok = true
			}
			if best < 0 || d < best {
				best = d
			}
		}
		if ok {
			seen[full] = true
			close = append(close, scored{full, best})
		}
	}
	sort.Slice(close, func(i, j int) bool {
		if close[i].dist != close[j].dist {
			return close[i].dist < close[j].dist
		}
		return close[i].name < close[j].name
	})
	if len(close) > 5 {
		close = close[:5]
	}
	msg := fmt.Sprintf("no table, view, incremental table, operation or assertion named %q in the compiled graph", name)
	if len(close) == 0 {
		return fmt.Errorf("%s (it has %d such actions)", msg, len(all))
	}
	names := make([]string, len(close))
	for i, c := range close {
		names[i] = c.name
	}
	return fmt.Errorf("%s; did you mean %s?", msg, strings.Join(names, ", "))
}

// editDistance is the Levenshtein distance of a and b (bytes; action names
// are ASCII in practice).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// JitOptions tune JitRequest. The zero value builds exactly the CLI's request.
type JitOptions struct {
	// ExecutionData is sent as execution_data. The official CLI never sets
	// it (run.ts:598-604), so JiT code run by `dataform run` sees
	// jctx.executionData === null; nil keeps that. PreviewExecutionData
	// makes a clearly-marked stand-in for previews that want one.
	ExecutionData *dataformpb.RunningExecutionData
	// AllowDisabled builds a request for a disabled action too. The CLI
	// never compiles one (build.ts:119 drops the jitCode of disabled
	// actions and the runner marks them DISABLED), but an editor may still
	// want to preview it.
	AllowDisabled bool
}

// ErrNoJitCode is returned (wrapped) for an action compiled ahead of time.
var ErrNoJitCode = errors.New("action has no jitCode")

// ErrDisabled is returned (wrapped) for a disabled action unless
// JitOptions.AllowDisabled is set.
var ErrDisabled = errors.New("action is disabled")

// JitRequest builds the JitCompilationRequest the official CLI's runner
// sends for action a of graph g (see the file comment for the sources):
// the action's effective target, its dependency targets as compiled, its
// jitCode, the graph's jitData and the compilation target type of its kind.
// file_paths is never set (the CLI does not, and core does not read it);
// execution_data only from opts. The messages are copies: the request does
// not share memory with g. g may be nil, and a.JitData (the graph's
// jitData FindAction copied) is used. Encode the request with
// EncodeJitRequest to get the CLI's bytes.
func JitRequest(g *dataformpb.CompiledGraph, a Action, opts JitOptions) (*dataformpb.JitCompilationRequest, error) {
	if a.JitCode == "" {
		return nil, fmt.Errorf("%s %s: %w: it is compiled ahead of time (only actions defined with .jitCode(...) have a JiT preview)", a.Kind, a.Name(), ErrNoJitCode)
	}
	if a.Disabled && !opts.AllowDisabled {
		return nil, fmt.Errorf("%s %s: %w: `dataform run` skips it without compiling its jitCode", a.Kind, a.Name(), ErrDisabled)
	}
	tt := a.TargetType()
	if tt == dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_UNSPECIFIED {
		// Core would throw "Unrecognized compilation target type: 0".
		return nil, fmt.Errorf("%s: unknown action kind %q", a.Name(), a.Kind)
	}
	if a.Target == nil {
		return nil, fmt.Errorf("%s %s has no target", a.Kind, a.Name())
	}
	// The CLI takes jitData from the graph (run.ts:603), not the action.
	jitData := a.JitData
	if g != nil {
		jitData = g.GetJitData()
	}
	req := &dataformpb.JitCompilationRequest{
		Target:                proto.CloneOf(a.Target),
		JitCode:               a.JitCode,
		CompilationTargetType: tt,
	}
	for _, d := range a.DependencyTargets {
		req.Dependencies = append(req.Dependencies, proto.CloneOf(d))
	}
	if jitData != nil {
		req.JitData = proto.CloneOf(jitData)
	}
	if opts.ExecutionData != nil {
		req.ExecutionData = proto.CloneOf(opts.ExecutionData)
	}
	return req, nil
}

// PreviewExecutionID is the execution id of PreviewExecutionData: JiT code
// that logs or branches on jctx.executionData.executionId can tell a dfd
// preview from a real run.
const PreviewExecutionID = "dfd-preview"

// PreviewExecutionData is a stand-in for the execution data a scheduler
// would give an action run on its own (`dataform run --actions <a>`):
// execution id PreviewExecutionID, start time start and the action's own
// target as the only run target. The official CLI sends no execution data
// at all; use this only where a preview should take the code's
// executionData branch.
func PreviewExecutionData(a Action, start time.Time) *dataformpb.RunningExecutionData {
	d := &dataformpb.RunningExecutionData{
		ExecutionId:        PreviewExecutionID,
		ExecutionStartTime: timestamppb.New(start),
	}
	if a.Target != nil {
		d.RunTargets = []*dataformpb.Target{proto.CloneOf(a.Target)}
	}
	return d
}

// compiledGraphJitData is CompiledGraph.jit_data's field number.
const compiledGraphJitData = 15

// jitRequestJitData is JitCompilationRequest.jit_data's field number.
const jitRequestJitData = 4

// EncodeJitRequest encodes req with the bytes the CLI's JiT worker hands to
// core. One thing differs from proto.Marshal: the CLI keeps the key order of
// jitData's Struct maps (core wrote them in the order jitData() was called;
// the CLI's JSON round trip keeps it), and core turns them into jctx.data in
// that order, so Object.keys(jctx.data) and JSON.stringify(jctx.data) depend
// on it. A Go Struct has lost that order, so when graphWire (the graph as
// core encoded it, Result.GraphWire) holds the same jitData, its bytes are
// used as they are; otherwise map keys are sorted (deterministic, but not
// necessarily core's order). Fields are written in field-number order, as
// protobufjs does.
func EncodeJitRequest(req *dataformpb.JitCompilationRequest, graphWire []byte) ([]byte, error) {
	if req == nil {
		return nil, errors.New("encoding JiT request: no request")
	}
	det := proto.MarshalOptions{Deterministic: true}
	b, err := det.Marshal(&dataformpb.JitCompilationRequest{Target: req.Target, Dependencies: req.Dependencies, JitCode: req.JitCode})
	if err != nil {
		return nil, fmt.Errorf("encoding JiT request: %w", err)
	}
	if req.JitData != nil {
		data, err := jitDataWire(req.JitData, graphWire)
		if err != nil {
			return nil, fmt.Errorf("encoding JiT request: %w", err)
		}
		b = appendMessageField(b, jitRequestJitData, data)
	}
	tail, err := det.Marshal(&dataformpb.JitCompilationRequest{
		CompilationTargetType: req.CompilationTargetType,
		FilePaths:             req.FilePaths,
		ExecutionData:         req.ExecutionData,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding JiT request: %w", err)
	}
	return append(b, tail...), nil
}

// jitDataWire returns core's own encoding of data when graphWire holds an
// equal jitData, else a deterministic encoding.
func jitDataWire(data *structpb.Struct, graphWire []byte) ([]byte, error) {
	if len(graphWire) > 0 {
		raw, err := lastField(graphWire, compiledGraphJitData)
		if err != nil {
			return nil, fmt.Errorf("reading jitData from the compiled graph: %w", err)
		}
		if raw != nil {
			var fromGraph structpb.Struct
			if err := proto.Unmarshal(raw, &fromGraph); err == nil && proto.Equal(&fromGraph, data) {
				return raw, nil
			}
		}
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(data)
}
