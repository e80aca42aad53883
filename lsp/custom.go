package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/workspace"
	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"
)

// dfd's own methods; lsp/PROTOCOL.md documents them for client authors.
const (
	MethodPreview        = "dfd/preview"
	MethodGraph          = "dfd/graph"
	MethodStatus         = "dfd/status"
	MethodRefresh        = "dfd/refreshMetadata"
	MethodPreviewChanged = "dfd/previewChanged" // notification, server → client
)

// customRequests are dfd's own requests, by method. Request dispatches
// them and initialize lists each in the experimental capabilities, so a
// client learns of every request the server answers (a list kept by hand
// once left dfd/lineage out).
func (s *Server) customRequests() map[string]func(context.Context, []byte) (any, error) {
	return map[string]func(context.Context, []byte) (any, error){
		MethodPreview: func(ctx context.Context, raw []byte) (any, error) { return s.preview(ctx, raw) },
		MethodGraph:   func(ctx context.Context, raw []byte) (any, error) { return s.graph(ctx, raw) },
		MethodStatus:  func(ctx context.Context, _ []byte) (any, error) { return s.status(ctx) },
		MethodRefresh: func(ctx context.Context, raw []byte) (any, error) { return s.refreshMetadata(ctx, raw) },
		MethodLineage: func(ctx context.Context, raw []byte) (any, error) { return s.lineage(ctx, raw) },
		MethodRows:    func(ctx context.Context, raw []byte) (any, error) { return s.rows(ctx, raw) },
	}
}

// customNotifications are the notifications dfd sends (server → client),
// listed in the experimental capabilities beside the requests.
var customNotifications = []string{MethodPreviewChanged}

// experimentalCapabilities is initialize's `experimental` field:
// {"dfd": {"preview": true, …, "protocol": "lsp/PROTOCOL.md"}}, one key per
// custom request and notification, the method without its "dfd/".
func (s *Server) experimentalCapabilities() map[string]any {
	dfd := map[string]any{"protocol": "lsp/PROTOCOL.md"}
	for method := range s.customRequests() {
		dfd[strings.TrimPrefix(method, "dfd/")] = true
	}
	for _, method := range customNotifications {
		dfd[strings.TrimPrefix(method, "dfd/")] = true
	}
	return map[string]any{"dfd": dfd}
}

// Request implements protocol.Server for methods outside the LSP
// specification.
func (s *Server) Request(ctx context.Context, method string, params any) (any, error) {
	var raw []byte
	switch p := params.(type) {
	case jsontext.Value:
		raw = p
	case []byte:
		raw = p
	}
	handle, ok := s.customRequests()[method]
	if !ok {
		return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("dfd: unknown method %q", method))
	}
	res, err := handle(ctx, raw)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encoding %s result: %w", method, err)
	}
	return jsonrpc2.RawMessage(b), nil
}

func decodeParams(raw []byte, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, "dfd: invalid params: "+err.Error())
	}
	return nil
}

// PreviewParams are the params of dfd/preview.
type PreviewParams struct {
	TextDocument struct {
		URI uri.URI `json:"uri"`
	} `json:"textDocument"`
	// Jit runs the JiT code of the file's JiT actions (default true).
	Jit *bool `json:"jit,omitempty"`
}

// PreviewResult is the result of dfd/preview.
type PreviewResult struct {
	URI         uri.URI         `json:"uri"`
	Project     uri.URI         `json:"project"`
	Version     int64           `json:"version"`
	CoreVersion string          `json:"coreVersion,omitempty"`
	CompileMs   float64         `json:"compileMs"`
	Error       string          `json:"error,omitempty"`
	Actions     []PreviewAction `json:"actions"`
}

// PreviewAction is one action of a dfd/preview result.
type PreviewAction struct {
	workspace.Action
	JitPreview *JitPreview `json:"jitPreview,omitempty"`
	// Cost is the action's figure for one run (BigQuery's dry runs),
	// when the snapshot's figures are known.
	Cost *ActionCost `json:"cost,omitempty"`
}

// JitPreview is the outcome of running an action's JiT code.
type JitPreview struct {
	*workspace.JitResult
	ElapsedMs float64 `json:"elapsedMs"`
	Error     string  `json:"error,omitempty"`
}

func (s *Server) preview(ctx context.Context, raw []byte) (*PreviewResult, error) {
	var params PreviewParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	// The preview reflects every edit received before it.
	r, err := s.awaitDocument(ctx, "dfd/preview", params.TextDocument.URI, false)
	if err != nil {
		return nil, err
	}
	p, rel, snap := r.p, r.rel, r.snap
	res := &PreviewResult{
		URI:         params.TextDocument.URI,
		Project:     uri.File(p.Root()),
		Version:     snap.Version,
		CoreVersion: snap.Info.CoreVersion,
		CompileMs:   ms(snap.Elapsed),
		Actions:     []PreviewAction{},
	}
	if snap.Err != nil {
		res.Error = snap.Err.Error()
	}
	if snap.Result != nil && res.CoreVersion == "" {
		res.CoreVersion = snap.Result.CoreVersion
	}
	actions := snap.ActionsIn(rel)
	res.Actions = make([]PreviewAction, len(actions))
	runJit := params.Jit == nil || *params.Jit
	var wg sync.WaitGroup
	for i, a := range actions {
		res.Actions[i] = PreviewAction{Action: *a, Cost: actionCost(snap, a)}
		res.Actions[i].SQL = previewSQL(a.SQL)
		if a.Jit && runJit && snap.Result != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res.Actions[i].JitPreview = s.jitPreview(ctx, snap, a)
			}()
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// previewSQL is an action's compiled SQL as a preview shows it: without
// the blank lines it starts with. Core keeps the text of a SQLX file
// between its config block and its SQL (usually a line break or two) in
// the compiled query, and the CLI prints queries only inside --json, as
// they are; a preview meant for reading and copying starts at the SQL.
// The compile's own output (the graph, dfd compile --json) is untouched.
func previewSQL(sql workspace.SQL) workspace.SQL {
	all := func(list []string) []string {
		if list == nil {
			return nil
		}
		out := make([]string, len(list)) // the snapshot's slices are shared
		for i, s := range list {
			out[i] = trimLeadingBlankLines(s)
		}
		return out
	}
	return workspace.SQL{
		Query: trimLeadingBlankLines(sql.Query), PreOps: all(sql.PreOps), PostOps: all(sql.PostOps),
		IncrementalQuery:  trimLeadingBlankLines(sql.IncrementalQuery),
		IncrementalPreOps: all(sql.IncrementalPreOps), IncrementalPostOps: all(sql.IncrementalPostOps),
		Queries: all(sql.Queries),
	}
}

// trimLeadingBlankLines drops the lines of s before its first line with
// anything but blanks on it; that line keeps its indentation.
func trimLeadingBlankLines(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r != ' ' && r != '\t' && r != '\n' && r != '\r' })
	if i < 0 {
		return s // nothing but blanks: leave it
	}
	return s[strings.LastIndexByte(s[:i], '\n')+1:]
}

// jitPreview runs (once per snapshot) an action's JiT code. The run is not
// tied to the request: its result is kept in the snapshot for the next
// request, and the backend bounds it with its own deadline.
func (s *Server) jitPreview(ctx context.Context, snap *workspace.Snapshot, a *workspace.Action) *JitPreview {
	res, err := snap.JitPreview(ctx, a.Target)
	out := &JitPreview{JitResult: res}
	if res != nil {
		out.ElapsedMs = ms(res.Elapsed)
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// notifyPreviewChanged tells clients that a project's previews may have
// changed (after every compile and settings change), listing the files
// that define actions.
func (s *Server) notifyPreviewChanged(snap *workspace.Snapshot) {
	if s.lifecycle() != stateInitialized {
		return
	}
	files := snap.Files()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(snap.Root, filepath.FromSlash(f))
	}
	uris := make([]uri.URI, len(files))
	for i, p := range workspace.CanonicalPaths(paths) {
		uris[i] = s.uriFor(p)
	}
	s.notify(MethodPreviewChanged, json.RawMessage(mustJSON(PreviewChangedParams{
		Project: uri.File(snap.Root), Version: snap.Version, URIs: uris, Error: errString(snap.Err),
	})))
}

// PreviewChangedParams are the params of dfd/previewChanged.
type PreviewChangedParams struct {
	Project uri.URI   `json:"project"`
	Version int64     `json:"version"`
	URIs    []uri.URI `json:"uris"`
	Error   string    `json:"error,omitempty"`
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// GraphParams are the params of dfd/graph.
type GraphParams struct {
	// URI is any file or folder of the project; empty: every project.
	URI uri.URI `json:"uri,omitempty"`
}

// GraphResult is the result of dfd/graph.
type GraphResult struct {
	Projects []GraphProject `json:"projects"`
}

// GraphProject is one project's action graph.
type GraphProject struct {
	Root        uri.URI       `json:"root"`
	Version     int64         `json:"version"`
	CoreVersion string        `json:"coreVersion,omitempty"`
	Error       string        `json:"error,omitempty"`
	Actions     []GraphAction `json:"actions"`
	// Edges: From depends on To (To runs first). Both are targets as
	// database.schema.name.
	Edges []GraphEdge `json:"edges"`
}

// GraphAction is an action of dfd/graph.
type GraphAction struct {
	Target       workspace.Target `json:"target"`
	Name         string           `json:"name"` // Target as database.schema.name
	Type         string           `json:"type"`
	URI          uri.URI          `json:"uri"`
	Tags         []string         `json:"tags"`
	Dependencies []string         `json:"dependencies"`
	Jit          bool             `json:"jit,omitempty"`
	Disabled     bool             `json:"disabled,omitempty"`
}

// GraphEdge is a dependency.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (s *Server) graph(ctx context.Context, raw []byte) (*GraphResult, error) {
	var params GraphParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	var projects []*workspace.Project
	if params.URI != "" {
		p := s.projectByURI(params.URI)
		if p == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd/graph: %s is not in a Dataform project", params.URI))
		}
		projects = []*workspace.Project{p}
	} else {
		projects = s.ws.Projects()
	}
	mins := make([]int64, len(projects))
	for i, p := range projects {
		p.FlushDeferred()
		mins[i] = p.Version()
	}
	Release(ctx)
	res := &GraphResult{Projects: []GraphProject{}}
	for i, p := range projects {
		snap, err := p.Await(ctx, mins[i])
		if err != nil {
			return nil, err
		}
		gp := GraphProject{Root: uri.File(p.Root()), Version: snap.Version, CoreVersion: snap.Info.CoreVersion,
			Error: errString(snap.Err), Actions: []GraphAction{}, Edges: []GraphEdge{}}
		for _, a := range snap.Actions() {
			ga := GraphAction{Target: a.Target, Name: a.Target.String(), Type: a.Kind, Tags: nonNil(a.Tags),
				URI: s.uriFor(canonicalPath(filepath.Join(p.Root(), filepath.FromSlash(a.File)))), Jit: a.Jit, Disabled: a.Disabled,
				Dependencies: []string{}}
			for _, d := range a.Dependencies {
				ga.Dependencies = append(ga.Dependencies, d.String())
				gp.Edges = append(gp.Edges, GraphEdge{From: a.Target.String(), To: d.String()})
			}
			gp.Actions = append(gp.Actions, ga)
		}
		res.Projects = append(res.Projects, gp)
	}
	return res, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// projectByURI is the project of a root, a folder inside a project or a
// file (nil when there is none).
func (s *Server) projectByURI(u uri.URI) *workspace.Project {
	path := canonicalPath(uriPath(u))
	if path == "" {
		return nil
	}
	if p := s.ws.Project(path); p != nil {
		return p
	}
	if p := s.ws.ProjectFor(filepath.Join(path, "x")); p != nil { // a folder, or
		return p
	}
	return s.ws.ProjectFor(path)
}

// StatusResult is the result of dfd/status.
type StatusResult struct {
	// ServerVersion is dfd's version (what `dfd version` prints).
	ServerVersion       string          `json:"serverVersion"`
	Projects            []StatusProject `json:"projects"`
	InvariantViolations int64           `json:"invariantViolations"`
}

// StatusProject is one project's state.
type StatusProject struct {
	Root        uri.URI `json:"root"`
	Version     int64   `json:"version"`
	Compiled    int64   `json:"compiledVersion"`
	CoreVersion string  `json:"coreVersion,omitempty"`
	Actions     int     `json:"actions"`
	CompileMs   float64 `json:"compileMs"`
	Error       string  `json:"error,omitempty"`
	// DeferredEdits: edits wait for a save or a dfd/preview
	// (dfd.compileAsYouType false).
	DeferredEdits bool `json:"deferredEdits,omitempty"`
	// Workers and Metadata come from project backends implementing
	// workspace.StatusReporter.
	Workers  *workspace.WorkerStatus   `json:"workers,omitempty"`
	Metadata *workspace.MetadataStatus `json:"metadata,omitempty"`
	// Cost is the latest compile's figure for one run of the project,
	// once known.
	Cost *ProjectCost `json:"cost,omitempty"`
	// Incremental is the project's incremental compiles (dfd.incremental).
	Incremental *workspace.IncrementalStatus `json:"incremental,omitempty"`
}

func (s *Server) status(ctx context.Context) (*StatusResult, error) {
	res := &StatusResult{ServerVersion: s.opts.Version, Projects: []StatusProject{}, InvariantViolations: s.invariants()}
	for _, p := range s.ws.Projects() {
		sp := StatusProject{Root: uri.File(p.Root()), Version: p.Version(), Compiled: -1, DeferredEdits: p.HasDeferred()}
		snap := p.Latest()
		if snap != nil {
			sp.Compiled = snap.Version
			sp.CoreVersion = snap.Info.CoreVersion
			sp.Actions = len(snap.Actions())
			sp.CompileMs = ms(snap.Elapsed)
			sp.Error = errString(snap.Err)
			sp.Cost = projectCost(snap)
		}
		if sr, ok := snap.Backend().(workspace.StatusReporter); ok {
			var ps workspace.ProjectStatus
			_ = s.recovered("project status", func() error {
				ps = sr.Status(ctx)
				return nil
			})
			sp.Workers, sp.Metadata, sp.Incremental = ps.Workers, ps.Metadata, ps.Incremental
		}
		res.Projects = append(res.Projects, sp)
	}
	return res, nil
}
