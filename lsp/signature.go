package lsp

import (
	"context"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
)

// SignatureHelp implements protocol.Server (textDocument/signatureHelp):
// the forms of the Dataform built-in whose parentheses hold the cursor —
// ref, resolve, self, when, incremental, name, schema, database (bare, on
// ctx or jctx) and the JiT adapter's methods — in a .sqlx file's ${…}
// placeholders and config/js blocks, and anywhere in a .js file.
func (s *Server) SignatureHelp(ctx context.Context, params *protocol.SignatureHelpParams) (*protocol.SignatureHelp, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	off := f.offset(params.Position)
	start, end, ok := 0, len(f.text), strings.HasSuffix(f.path, ".js")
	if f.sqlx {
		x := f.scan()
		for _, p := range x.Placeholders {
			if off > p.Start+1 && off < p.End {
				start, end, ok = p.Start+2, p.End, true
				if f.text[end-1] == '}' {
					end--
				}
			}
		}
		if b, in := x.BlockAt(off); !ok && in && (b.Kind == source.ConfigBlock || b.Kind == source.JSBlock) {
			start, end, ok = b.Body.Start, b.Body.End, true
		}
	}
	if !ok {
		return nil, nil
	}
	callee, arg, ok := source.CallAt(f.text, start, end, off)
	if !ok {
		return nil, nil
	}
	forms := source.SignaturesFor(callee)
	if len(forms) == 0 {
		return nil, nil
	}
	help := &protocol.SignatureHelp{}
	active := -1
	for i, form := range forms {
		info := protocol.SignatureInformation{Label: form.Label, Documentation: protocol.String(form.Doc)}
		for _, p := range form.Params {
			info.Parameters = append(info.Parameters, protocol.ParameterInformation{Label: protocol.String(p)})
		}
		help.Signatures = append(help.Signatures, info)
		if active < 0 && len(form.Params) > arg {
			active = i // the first form with that many arguments: ref("s", "n") is (schema, name)
		}
	}
	if active < 0 {
		active = 0
	}
	a := uint32(active)
	help.ActiveSignature = &a
	if n := len(forms[active].Params); n > 0 {
		help.ActiveParameter = protocol.NewNullable(uint32(min(arg, n-1)))
	}
	return help, nil
}
