package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
)

// Definition implements protocol.Server: from ref("x"), ref("s", "x"),
// ref({schema, name}), ${ref(…)}, resolve(…) and action names in
// dependency lists to the file defining the action; from includes
// functions and constants (billing.planPriceCase) to their definition;
// from require("…") to the file.
func (s *Server) Definition(ctx context.Context, params *protocol.DefinitionParams) (protocol.DefinitionResult, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	locs := s.definitionAt(ctx, f, f.offset(params.Position))
	if len(locs) == 0 {
		return nil, nil
	}
	return protocol.LocationSlice(locs), nil
}

func (s *Server) definitionAt(ctx context.Context, f *fileCtx, off int) []protocol.Location {
	if f.p == nil {
		return nil
	}
	if r, ok := source.RefAt(f.refs(), off); ok {
		return s.actionLocations(f, r.Database.Value, r.Schema.Value, r.Name.Value)
	}
	for _, rq := range source.FindRequires(f.text) {
		if rq.Span.Contains(off) {
			if target, ok := resolveRequire(f.p.Root(), f.path, rq.Path.Value, s.fileExists); ok {
				return []protocol.Location{{URI: s.uriFor(target)}}
			}
			return nil
		}
	}
	if str, ok := source.StringAt(f.text, off); ok {
		if locs := s.actionLocations(f, "", "", str.Value); len(locs) > 0 {
			return locs
		}
	}
	if v, _, ok := s.variableAt(ctx, f, off); ok {
		return []protocol.Location{{URI: f.uri, Range: f.rangeOf(v.Span)}}
	}
	if path, idx, _ := source.WordAt(f.text, off); len(path) > 0 {
		mods := s.includeModules(f.p.Root())
		file, ok := mods[path[0]]
		if !ok {
			return nil
		}
		if idx == 0 || len(path) == 1 {
			return []protocol.Location{{URI: s.uriFor(file)}}
		}
		text, err := s.readFile(file)
		if err != nil {
			return nil
		}
		if sp, ok := source.FindDefinition(text, path[1]); ok {
			return []protocol.Location{{URI: s.uriFor(file), Range: rangeOf(source.NewMapper(text), sp)}}
		}
		return []protocol.Location{{URI: s.uriFor(file)}}
	}
	return nil
}

func (s *Server) actionLocations(f *fileCtx, database, schema, name string) []protocol.Location {
	if f.snap == nil {
		return nil
	}
	var out []protocol.Location
	for _, a := range f.snap.Lookup(database, schema, name) {
		out = append(out, s.actionLocation(f.p.Root(), a))
	}
	return out
}
