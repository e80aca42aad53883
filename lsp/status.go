package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"
)

// StatusBackend is implemented by backends that can describe a project's
// workers and metadata source for dfd/status. It is optional: the server
// type-asserts it.
type StatusBackend interface {
	// ProjectStatus answers quickly (no network): it is for status bars.
	ProjectStatus(ctx context.Context, root string) ProjectStatus
}

// ProjectStatus is what a StatusBackend says about a project; nil fields
// are left out of dfd/status.
type ProjectStatus struct {
	Workers  *WorkerStatus
	Metadata *MetadataStatus
}

// WorkerStatus counts the worker processes of a project's pool.
type WorkerStatus struct {
	Ready int `json:"ready"` // idle, ready for a request
	Busy  int `json:"busy"`  // serving a request
	Total int `json:"total"` // running or starting
}

// Metadata states of MetadataStatus.
const (
	MetadataOnline  = "online"
	MetadataOffline = "offline"
	MetadataStale   = "stale"
	MetadataError   = "error"
	MetadataNone    = "none"
)

// MetadataStatus describes a project's metadata source.
type MetadataStatus struct {
	// Source is "snapshot", "bigquery" or "none".
	Source string `json:"source"`
	// State is one of the Metadata* constants.
	State string `json:"state"`
	// Detail is for people: the snapshot file, the BigQuery project, the
	// error.
	Detail string `json:"detail,omitempty"`
}

// MetadataRefresher is implemented by backends that can re-read their
// metadata source (dfd/refreshMetadata). It is optional.
type MetadataRefresher interface {
	RefreshMetadata(ctx context.Context, req RefreshRequest) (RefreshResult, error)
}

// RefreshRequest asks to refresh a project's metadata.
type RefreshRequest struct {
	Root string
	// Graph is CompileResult.Graph of the latest compile (nil before the
	// first): the datasets it references are the project's.
	Graph any
}

// RefreshResult is what a refresh did.
type RefreshResult struct {
	// Source is the project's metadata source ("snapshot", "bigquery",
	// "none").
	Source string
	// Refreshed counts what was read again: the snapshot's tables, or the
	// BigQuery cache entries fetched.
	Refreshed int
}

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
	var projects []*projectState
	if params.URI != "" {
		if uriPath(params.URI) == "" {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "dfd/refreshMetadata: uri must be a file: URI")
		}
		p := s.projectByURI(params.URI)
		if p == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd/refreshMetadata: %s is not in a Dataform project", params.URI))
		}
		projects = []*projectState{p}
	} else {
		projects = s.projects.all()
	}
	// Refreshing BigQuery can take a while: let later messages through.
	Release(ctx)
	res := &RefreshMetadataResult{Projects: []RefreshedProject{}}
	mr, _ := s.backend.(MetadataRefresher)
	for _, p := range projects {
		rp := RefreshedProject{Root: uri.File(p.root), Source: "none"}
		if mr != nil {
			var graph any
			if snap := p.latest(); snap != nil && snap.Result != nil {
				graph = snap.Result.Graph
			}
			var r RefreshResult
			err := s.recovered("refresh metadata", func() error {
				var err error
				r, err = mr.RefreshMetadata(ctx, RefreshRequest{Root: p.root, Graph: graph})
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
				s.log.Warn("refreshing metadata", "project", p.root, "error", err)
			} else {
				s.log.Info("metadata refreshed", "project", p.root, "source", rp.Source, "refreshed", rp.Refreshed)
			}
		}
		res.Projects = append(res.Projects, rp)
	}
	s.refreshPreviews(projects)
	return res, nil
}
