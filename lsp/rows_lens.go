package lsp

import (
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/workspace"
)

// dataLenses are an action's warehouse lenses, shown only with the
// BigQuery metadata source (a snapshot has no rows and no console):
// "Preview data" (dfd.previewData, arguments [uri, target, source]:
// "table" for a declaration, whose rows are its table's, else "query")
// and "Open in BigQuery" (dfd.openInBigQuery, arguments [uri, target]).
// Like the other lenses, the commands are the client's; it calls dfd/rows.
func (s *Server) dataLenses(a *workspace.Action, rng protocol.Range, uriArg, target protocol.LSPAny) []protocol.CodeLens {
	if !strings.EqualFold(strings.TrimSpace(s.currentSettings().MetadataSource), "bigquery") || a.Kind == workspace.KindTest {
		return nil
	}
	source := workspace.RowsFromQuery
	if a.Kind == workspace.KindDeclaration {
		source = workspace.RowsFromTable
	}
	out := []protocol.CodeLens{{Range: rng, Command: protocol.Command{
		Title: "Preview data", Command: CommandPreviewData, Arguments: []protocol.LSPAny{uriArg, target, mustJSON(source)},
	}}}
	if a.Kind != workspace.KindOperation {
		out = append(out, protocol.CodeLens{Range: rng, Command: protocol.Command{
			Title: "Open in BigQuery", Command: CommandOpenInBigQuery, Arguments: []protocol.LSPAny{uriArg, target},
		}})
	}
	return out
}
