package lsp

import (
	"context"
	"fmt"

	"github.com/dfdtools/dfd/workspace"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"
)

// RefreshParams are the params of dfd/refreshMetadata.
type RefreshParams struct {
	// URI is a project's root or any file or folder in it; empty: every
	// project.
	URI uri.URI `json:"uri,omitempty"`
}

// RefreshMetadataResult is the result of dfd/refreshMetadata.
type RefreshMetadataResult struct {
	Projects []RefreshedProject `json:"projects"`
}

// RefreshedProject is one project's refresh.
type RefreshedProject struct {
	Root      uri.URI `json:"root"`
	Source    string  `json:"source"`
	Refreshed int     `json:"refreshed"`
	Error     string  `json:"error,omitempty"`
}

func (s *Server) refreshMetadata(ctx context.Context, raw []byte) (*RefreshMetadataResult, error) {
	var params RefreshParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	var projects []*workspace.Project
	if params.URI != "" {
		if uriPath(params.URI) == "" {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "dfd/refreshMetadata: uri must be a file: URI")
		}
		p := s.projectByURI(params.URI)
		if p == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd/refreshMetadata: %s is not in a Dataform project", params.URI))
		}
		projects = []*workspace.Project{p}
	} else {
		projects = s.ws.Projects()
	}
	// Refreshing BigQuery can take a while: let later messages through.
	Release(ctx)
	res := &RefreshMetadataResult{Projects: []RefreshedProject{}}
	for _, p := range projects {
		rp := RefreshedProject{Root: uri.File(p.Root()), Source: "none"}
		snap := p.Latest()
		if mr, ok := snap.Backend().(workspace.MetadataRefresher); ok {
			var graph any
			if snap.Result != nil {
				graph = snap.Result.Graph
			}
			var r workspace.RefreshResult
			err := s.recovered("refresh metadata", func() error {
				var err error
				r, err = mr.RefreshMetadata(ctx, graph)
				return err
			})
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if r.Source != "" {
				rp.Source = r.Source
			}
			rp.Refreshed = r.Refreshed
			if err != nil {
				rp.Error = err.Error()
				s.log.Warn("refreshing metadata", "project", p.Root(), "error", err)
			} else {
				s.log.Info("metadata refreshed", "project", p.Root(), "source", rp.Source, "refreshed", rp.Refreshed)
			}
		}
		res.Projects = append(res.Projects, rp)
	}
	for _, p := range projects {
		p.RefreshPreview()
	}
	return res, nil
}
