package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/workspace"
)

// docRequest is a custom request about one file, resolved: its project,
// its path (absolute and relative to the project's root), its text as the
// editor had it when asking (with withView), and the first snapshot that
// includes every edit received before the request.
type docRequest struct {
	path, rel string
	p         *workspace.Project
	doc       *workspace.Document
	snap      *workspace.Snapshot
}

// awaitDocument resolves u for method ("dfd/preview", …): InvalidParams
// when it is not a file of a Dataform project. It compiles deferred
// edits now (dfd.compileAsYouType false), notes the project's version,
// then lets later messages through (Release) while it waits for a
// snapshot at least that new.
func (s *Server) awaitDocument(ctx context.Context, method string, u uri.URI, withView bool) (*docRequest, error) {
	r := &docRequest{path: canonicalPath(uriPath(u))}
	if r.path == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, method+": textDocument.uri must be a file: URI")
	}
	if r.p = s.ws.ProjectFor(r.path); r.p == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s: %s is not in a Dataform project (no workflow_settings.yaml or dataform.json above it)", method, r.path))
	}
	if withView {
		var err error
		if r.doc, err = s.ws.View(r.path); err != nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, method+": "+err.Error())
		}
	}
	r.rel, _ = relSlash(r.p.Root(), r.path)
	r.p.FlushDeferred()
	min := r.p.Version()
	Release(ctx)
	var err error
	if r.snap, err = r.p.Await(ctx, min); err != nil {
		return nil, err
	}
	return r, nil
}
