package daemon_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"go.lsp.dev/protocol"
)

// Signature help for Dataform's built-ins as an editor asks for it: in a
// .sqlx placeholder, in a js block, in a .js file's JiT code (jctx and its
// adapter); the form matches the arguments written so far; nothing for
// other calls or outside a call.
func TestSignatureHelp(t *testing.T) {
	s, root := shopSession(t)
	sqlx := filepath.Join(root, "definitions", "sig.sqlx")
	if err := s.ed.OpenText(s.ctx, sqlx, "config { type: \"view\" }\njs {\n  const t = resolve(\"orders\");\n}\nSELECT * FROM ${ref(\"shop\", \"orders\")} WHERE ${when(incremental(), \"x\", \"y\")} AND f(1)\n"); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(root, "definitions", "sig.js")
	if err := s.ed.OpenText(s.ctx, js, "publish(\"sig_jit\").jitCode(async (jctx) => {\n  const r = await jctx.adapter.execute({statement: \"SELECT 1\"});\n  return {query: `SELECT * FROM ${jctx.ref(\"orders\")}`};\n});\n"); err != nil {
		t.Fatal(err)
	}
	help := func(path, marker string, delta int) *protocol.SignatureHelp {
		t.Helper()
		pos, err := s.ed.Pos(path, marker, delta)
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := s.ed.Call(s.ctx, protocol.MethodTextDocumentSignatureHelp, map[string]any{
			"textDocument": map[string]any{"uri": fileURI(path)}, "position": pos}, &raw); err != nil {
			t.Fatal(err)
		}
		if string(raw) == "null" {
			return nil
		}
		h := &protocol.SignatureHelp{} // go.lsp.dev's unions decode with its own decoder
		if err := protocol.Unmarshal(raw, h); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return h
	}
	for _, c := range []struct {
		path, marker string
		delta        int
		label        string // of the active form; "" for no help
		param        uint32
	}{
		{sqlx, `ref("shop"`, 4, "ref(name) → string", 0},
		{sqlx, `"orders")}`, 0, "ref(schema, name) → string", 1},
		{sqlx, `"y")}`, 0, "when(condition, then, else?) → string", 2},
		{sqlx, `incremental()`, 12, "incremental() → boolean", 0},
		{sqlx, `resolve("orders")`, 8, "resolve(name) → string", 0},
		{sqlx, `f(1)`, 2, "", 0},
		{sqlx, `SELECT *`, 3, "", 0},
		{js, `{statement`, 1, "execute({statement, …}) → Promise<ExecuteResponse>", 0},
		{js, `jctx.ref("orders")`, 9, "ref(name) → string", 0},
	} {
		h := help(c.path, c.marker, c.delta)
		if c.label == "" {
			if h != nil && len(h.Signatures) > 0 {
				t.Errorf("%s+%d: help %+v, want none", c.marker, c.delta, h.Signatures)
			}
			continue
		}
		if h == nil || h.ActiveSignature == nil || int(*h.ActiveSignature) >= len(h.Signatures) {
			t.Errorf("%s+%d: no signature help (%+v)", c.marker, c.delta, h)
			continue
		}
		got := h.Signatures[*h.ActiveSignature]
		p, _ := h.ActiveParameter.Get()
		if got.Label != c.label || len(got.Parameters) > 0 && p != c.param {
			t.Errorf("%s+%d: %q parameter %d, want %q parameter %d", c.marker, c.delta, got.Label, p, c.label, c.param)
		}
	}
}
