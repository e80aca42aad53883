package lsp

import (
	"context"
	"fmt"
	"sort"

	"github.com/dfdtools/dfd/workspace"
	"go.lsp.dev/protocol"
)

// Code lens commands. They are client-side commands (the VS Code extension
// implements them; see PROTOCOL.md): the server only places them.
const (
	CommandShowPreview    = "dfd.showPreview"
	CommandShowDependents = "dfd.showDependents"
	// With the BigQuery metadata source (see rows_lens.go).
	CommandPreviewData    = "dfd.previewData"
	CommandOpenInBigQuery = "dfd.openInBigQuery"
)

// CodeLens implements protocol.Server: above each action, "Preview SQL",
// a JiT badge for JiT actions, its cost for one run once BigQuery's dry
// runs gave it (metadata source bigquery), and its number of dependents.
func (s *Server) CodeLens(ctx context.Context, params *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	out := []protocol.CodeLens{}
	if f.snap == nil {
		return out, nil
	}
	actions := append([]*workspace.Action(nil), f.snap.ActionsIn(f.rel)...)
	sort.SliceStable(actions, func(i, j int) bool { return actions[i].Target.String() < actions[j].Target.String() })
	for _, a := range actions {
		sel, _ := definitionSpan(f.doc, a)
		line := f.m.LineOf(sel.Start)
		rng := protocol.Range{Start: protocol.Position{Line: uint32(line)}, End: protocol.Position{Line: uint32(line)}}
		target := mustJSON(a.Target)
		uriArg := mustJSON(f.uri)
		title := "Preview SQL"
		if len(actions) > 1 {
			title = "Preview " + a.Target.Name
		}
		out = append(out, protocol.CodeLens{Range: rng, Command: protocol.Command{
			Title: title, Command: CommandShowPreview, Arguments: []protocol.LSPAny{uriArg, target},
		}})
		if a.Jit {
			out = append(out, protocol.CodeLens{Range: rng, Command: protocol.Command{
				Title: "⚡ JiT", Command: CommandShowPreview, Arguments: []protocol.LSPAny{uriArg, target},
			}})
		}
		if c := actionCost(f.snap, a); c != nil {
			// BigQuery's figure for this snapshot's text (never an older
			// one's); the preview shows it with the statements.
			out = append(out, protocol.CodeLens{Range: rng, Command: protocol.Command{
				Title: c.Label, Command: CommandShowPreview, Arguments: []protocol.LSPAny{uriArg, target},
			}})
		}
		out = append(out, s.dataLenses(a, rng, uriArg, target)...)
		n := len(f.snap.Dependents(a))
		deps := fmt.Sprintf("%d dependents", n)
		if n == 1 {
			deps = "1 dependent"
		}
		pos := mustJSON(protocol.Position{Line: uint32(line)})
		out = append(out, protocol.CodeLens{Range: rng, Command: protocol.Command{
			Title: deps, Command: CommandShowDependents, Arguments: []protocol.LSPAny{uriArg, pos, target},
		}})
	}
	return out, nil
}
