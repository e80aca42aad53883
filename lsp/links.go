package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/source"
)

// DocumentLink implements protocol.Server: the name of each ref() and
// resolve() links to the file that defines the action it names, and the
// path of each require("…") to the file the engine loads for it. A ref
// that names no action, or more than one, has no link (the diagnostics
// say why); go-to-definition remains the way to the exact line.
func (s *Server) DocumentLink(ctx context.Context, params *protocol.DocumentLinkParams) ([]protocol.DocumentLink, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	if f.p == nil {
		return nil, nil
	}
	out := []protocol.DocumentLink{}
	link := func(sp source.Span, target uri.URI, tip string) {
		l := protocol.DocumentLink{Range: f.rangeOf(sp), Target: &target}
		if tip != "" {
			l.Tooltip = &tip
		}
		out = append(out, l)
	}
	if f.snap != nil {
		for _, r := range f.refs() {
			found := f.snap.Lookup(r.Database.Value, r.Schema.Value, r.Name.Value)
			if len(found) != 1 || r.Name.Span == (source.Span{}) {
				continue
			}
			a := found[0]
			loc := s.actionLocation(f.p.Root(), a)
			link(r.Name.Span, loc.URI, fmt.Sprintf("%s (%s)", a.Target.String(), a.File))
		}
	}
	for _, rq := range source.FindRequires(f.text) {
		if target, ok := resolveRequire(f.p.Root(), f.path, rq.Path.Value, s.fileExists); ok {
			rel, _ := relSlash(f.p.Root(), target)
			link(rq.Path.Span, s.uriFor(target), rel)
		}
	}
	return out, nil
}
