// Command gen writes everything that settings/settings.json decides: the
// server's Settings type and its field table (settings/settings_gen.go),
// the settings table of lsp/PROTOCOL.md, vscode-extension/README.md and
// docs/editors.md (between their "settings table" markers), the extension's configuration
// contribution (vscode-extension/package.json, contributes.configuration
// .properties; the rest of the file is kept byte for byte) and the keys it
// sends to the server (vscode-extension/src/settings_gen.ts).
//
//	go run ./settings/gen          # from the repository root: write
//	go run ./settings/gen -check   # fail, naming the stale files, if any differs
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
)

type setting struct {
	Key              string   `json:"key"`
	Go               string   `json:"go"`
	Scope            string   `json:"scope"`
	Kind             string   `json:"kind"`
	Enum             []string `json:"enum"`
	EnumDescriptions []string `json:"enumDescriptions"`
	Lenient          bool     `json:"lenient"`
	Default          any      `json:"default"`
	VSCodeDefault    any      `json:"vscodeDefault"`
	Minimum          *float64 `json:"minimum"`
	Maximum          *float64 `json:"maximum"`
	VSCodeScope      string   `json:"vscodeScope"`
	GoDoc            string   `json:"goDoc"`
	Short            string   `json:"short"`
	Protocol         string   `json:"protocol"`
	VSCode           string   `json:"vscode"`
}

func (s setting) server() bool { return s.Scope == "server" || s.Scope == "both" }

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "compare instead of writing; exit 1 when a file is stale")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "settings/gen:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	raw, err := os.ReadFile(filepath.Join(root, "settings", "settings.json"))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var table struct {
		Settings []setting `json:"settings"`
	}
	if err := dec.Decode(&table); err != nil {
		return fmt.Errorf("settings.json: %w", err)
	}
	if err := validate(table.Settings); err != nil {
		return err
	}
	outputs := map[string]func([]byte) ([]byte, error){
		"settings/settings_gen.go":             func([]byte) ([]byte, error) { return goFile(table.Settings) },
		"vscode-extension/src/settings_gen.ts": func([]byte) ([]byte, error) { return tsFile(table.Settings), nil },
		"lsp/PROTOCOL.md": func(old []byte) ([]byte, error) {
			return replaceBetween(old, protocolTable(table.Settings))
		},
		"vscode-extension/README.md": func(old []byte) ([]byte, error) {
			return replaceBetween(old, readmeTable(table.Settings))
		},
		"docs/editors.md": func(old []byte) ([]byte, error) {
			return replaceBetween(old, readmeTable(table.Settings))
		},
		"vscode-extension/package.json": func(old []byte) ([]byte, error) { return packageJSON(old, table.Settings) },
	}
	var stale []string
	for _, name := range sortedKeys(outputs) {
		path := filepath.Join(root, filepath.FromSlash(name))
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		fresh, err := outputs[name](old)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if bytes.Equal(old, fresh) {
			continue
		}
		if check {
			stale = append(stale, name)
			continue
		}
		if err := os.WriteFile(path, fresh, 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("stale (edit settings/settings.json, not these, then run 'go generate ./settings'): %s", strings.Join(stale, ", "))
	}
	return nil
}

func validate(ss []setting) error {
	seen := map[string]bool{}
	for _, s := range ss {
		if seen[s.Key] {
			return fmt.Errorf("setting %s twice", s.Key)
		}
		seen[s.Key] = true
		switch s.Scope {
		case "server", "both", "client":
		default:
			return fmt.Errorf("%s: scope %q", s.Key, s.Scope)
		}
		switch s.Kind {
		case "string", "enum", "bool", "ms", "int", "number":
		default:
			return fmt.Errorf("%s: kind %q", s.Key, s.Kind)
		}
		if s.server() && (s.Go == "" || s.GoDoc == "" || s.Protocol == "") {
			return fmt.Errorf("%s: a server setting needs go, goDoc and protocol", s.Key)
		}
		if s.Kind == "enum" && len(s.Enum) == 0 {
			return fmt.Errorf("%s: an enum without values", s.Key)
		}
		if s.Short == "" || s.VSCode == "" {
			return fmt.Errorf("%s: short and vscode texts are required", s.Key)
		}
	}
	return nil
}

// --- Go -------------------------------------------------------------------

func goType(s setting) string {
	switch s.Kind {
	case "bool":
		return "bool"
	case "ms":
		return "time.Duration"
	case "int":
		return "int64"
	case "number":
		return "float64"
	}
	return "string"
}

func goDefault(s setting) string {
	switch v := s.Default.(type) {
	case nil:
		return ""
	case bool:
		if !v {
			return ""
		}
		return "true"
	case json.Number:
		if v.String() == "0" {
			return ""
		}
		if s.Kind == "ms" {
			return v.String() + " * time.Millisecond"
		}
		return v.String()
	case string:
		if v == "" {
			return ""
		}
		return fmt.Sprintf("%q", v)
	}
	return ""
}

func goFile(ss []setting) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./settings/gen from settings/settings.json. DO NOT EDIT.\n\npackage settings\n\nimport \"time\"\n\n")
	b.WriteString("// Settings are the client's dfd settings, as the server reads them.\n// The zero value of a field means the server's own default.\ntype Settings struct {\n")
	for _, s := range ss {
		if !s.server() {
			continue
		}
		fmt.Fprintf(&b, "\t// %s\n\t%s %s\n", wrapComment(s.GoDoc+" Setting dfd."+s.Key+"."), s.Go, goType(s))
	}
	b.WriteString("}\n\n// Defaults are the settings before the client says anything.\nfunc Defaults() Settings {\n\treturn Settings{\n")
	for _, s := range ss {
		if d := goDefault(s); s.server() && d != "" {
			fmt.Fprintf(&b, "\t\t%s: %s,\n", s.Go, d)
		}
	}
	b.WriteString("\t}\n}\n\n// fields are the server's settings by key (without \"dfd.\").\nvar fields = map[string]field{\n")
	for _, s := range ss {
		if !s.server() {
			continue
		}
		fmt.Fprintf(&b, "\t%q: {kind: kind%s", s.Key, strings.ToUpper(s.Kind[:1])+s.Kind[1:])
		if len(s.Enum) > 0 {
			fmt.Fprintf(&b, ", enum: %#v", s.Enum)
		}
		if s.Lenient {
			b.WriteString(", lenient: true")
		}
		if s.Minimum != nil {
			fmt.Fprintf(&b, ", min: %s, hasMin: true", num(*s.Minimum))
		}
		if s.Maximum != nil {
			fmt.Fprintf(&b, ", max: %s, hasMax: true", num(*s.Maximum))
		}
		fmt.Fprintf(&b, ",\n\t\tget: func(s *Settings) any { return &s.%s },\n\t\treset: func(s *Settings) { s.%s = Defaults().%s }},\n", s.Go, s.Go, s.Go)
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the Go code: %w\n%s", err, b.Bytes())
	}
	return out, nil
}

func num(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprint(f)
}

// wrapComment continues a long comment on "\t// " lines.
func wrapComment(s string) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > 72 {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	lines = append(lines, line)
	return strings.Join(lines, "\n\t// ")
}

// --- TypeScript -----------------------------------------------------------

func tsFile(ss []setting) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./settings/gen from settings/settings.json. DO NOT EDIT.\n\n")
	b.WriteString("/** The settings sent to the server, by key under `dfd.`. */\nexport const SERVER_SETTING_KEYS = [\n")
	for _, s := range ss {
		if s.server() {
			fmt.Fprintf(&b, "  %q,\n", s.Key)
		}
	}
	b.WriteString("] as const;\n")
	return b.Bytes()
}

// --- Markdown ---------------------------------------------------------------

const (
	beginMarker = "<!-- settings table: generated by go run ./settings/gen from settings/settings.json; edit that file -->\n"
	endMarker   = "<!-- end of settings table -->\n"
)

func replaceBetween(doc []byte, table string) ([]byte, error) {
	i := bytes.Index(doc, []byte(beginMarker))
	j := bytes.Index(doc, []byte(endMarker))
	if i < 0 || j < i {
		return nil, fmt.Errorf("no settings table markers (%q … %q)", strings.TrimSpace(beginMarker), strings.TrimSpace(endMarker))
	}
	var b bytes.Buffer
	b.Write(doc[:i+len(beginMarker)])
	b.WriteString(table)
	b.Write(doc[j:])
	return b.Bytes(), nil
}

func protocolTable(ss []setting) string {
	var b strings.Builder
	b.WriteString("| setting | meaning |\n|---|---|\n")
	for _, s := range ss {
		if s.server() {
			fmt.Fprintf(&b, "| `dfd.%s` | %s |\n", s.Key, cell(s.Protocol))
		}
	}
	return b.String()
}

func readmeTable(ss []setting) string {
	var b strings.Builder
	b.WriteString("| setting | default | meaning |\n|---|---|---|\n")
	for _, s := range ss {
		fmt.Fprintf(&b, "| `dfd.%s` | %s | %s |\n", s.Key, shownDefault(s), cell(s.Short))
	}
	return b.String()
}

func vscodeDefault(s setting) any {
	if s.VSCodeDefault != nil {
		return s.VSCodeDefault
	}
	return s.Default
}

func shownDefault(s setting) string {
	switch v := vscodeDefault(s).(type) {
	case nil:
		return "unset"
	case string:
		if v == "" {
			return "`\"\"`"
		}
		return "`" + v + "`"
	default:
		return fmt.Sprintf("`%v`", v)
	}
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// --- package.json ----------------------------------------------------------

// packageJSON replaces contributes.configuration.properties of old with the
// table's settings; every other byte of the file stays.
func packageJSON(old []byte, ss []setting) ([]byte, error) {
	doc, err := parseOrdered(old)
	if err != nil {
		return nil, err
	}
	contributes := doc.(*object).get("contributes")
	if contributes == nil {
		return nil, fmt.Errorf("no contributes")
	}
	conf := contributes.(*object).get("configuration")
	if conf == nil {
		return nil, fmt.Errorf("no contributes.configuration")
	}
	props := &object{}
	for _, s := range ss {
		p := &object{}
		switch s.Kind {
		case "bool":
			p.set("type", "boolean")
		case "ms", "int", "number":
			if vscodeDefault(s) == nil {
				p.set("type", []any{"number", "null"})
			} else {
				p.set("type", "number")
			}
		default:
			p.set("type", "string")
		}
		if len(s.Enum) > 0 {
			p.set("enum", toAny(s.Enum))
		}
		if len(s.EnumDescriptions) > 0 {
			p.set("enumDescriptions", toAny(s.EnumDescriptions))
		}
		if d := vscodeDefault(s); d != nil || s.Kind == "ms" || s.Kind == "int" || s.Kind == "number" {
			p.set("default", d)
		}
		if s.VSCodeScope != "" {
			p.set("scope", s.VSCodeScope)
		}
		if s.Minimum != nil {
			p.set("minimum", json.Number(num(*s.Minimum)))
		}
		p.set("markdownDescription", s.VSCode)
		props.set("dfd."+s.Key, p)
	}
	conf.(*object).set("properties", props)
	var b bytes.Buffer
	writeOrdered(&b, doc, "")
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
