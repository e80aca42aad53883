package source

// ConfigValue is a value of a SQLX config block as written, for edits of
// the strings in it (a column rename rewrites uniqueKey, clusterBy, …):
// a string literal, an array or object literal, or anything else (Other).
type ConfigValue struct {
	Kind ConfigKind
	// Str is a string literal's value and where it is (without quotes);
	// Plain: it is written without escapes or ${…}, so Str.Span holds
	// exactly Str.Value.
	Str    StringArg
	Plain  bool
	Elems  []ConfigValue
	Fields []ConfigField
	Span   Span
}

// ConfigKind says what a ConfigValue is.
type ConfigKind uint8

const (
	ConfigOther ConfigKind = iota
	ConfigString
	ConfigArray
	ConfigObject
)

// ConfigField is a key of a config object. Computed keys ([k], ...spread)
// have no Key. KeyName is where the key's name is: the identifier, or a
// quoted key's text inside the quotes (KeyQuoted).
type ConfigField struct {
	Key       string
	KeyName   Span
	KeyQuoted bool
	Computed  bool
	Value     ConfigValue
}

// Field is the last field named key (JavaScript keeps the last), ok false
// when there is none.
func (v ConfigValue) Field(key string) (ConfigField, bool) {
	var found ConfigField
	ok := false
	for _, f := range v.Fields {
		if !f.Computed && f.Key == key {
			found, ok = f, true
		}
	}
	return found, ok
}

// SQLXConfig is the config block of a .sqlx file as a value, ok false when
// the file has none (or it is not an object literal).
func SQLXConfig(text []byte) (ConfigValue, bool) {
	b, ok := ScanSQLX(text).Config()
	if !ok {
		return ConfigValue{}, false
	}
	brace := b.Span.Start + len("config ")
	p := &parser{src: text, toks: jsTokens(text, brace, b.Span.End)}
	if len(p.toks) == 0 || !p.punct(0, "{") || p.toks[0].Match <= 0 {
		return ConfigValue{}, false
	}
	return exportValue(text, p.object(0)), true
}

func exportValue(src []byte, v jsValue) ConfigValue {
	out := ConfigValue{Span: v.span}
	switch v.kind {
	case valString:
		out.Kind, out.Str, out.Plain = ConfigString, v.str, v.plain
	case valArray:
		out.Kind = ConfigArray
		for _, e := range v.elems {
			out.Elems = append(out.Elems, exportValue(src, e))
		}
	case valObject:
		out.Kind = ConfigObject
		for _, f := range v.fields {
			cf := ConfigField{Key: f.key, KeyName: f.keySpan, Computed: f.computed || f.key == "", Value: exportValue(src, f.value)}
			if s := f.keySpan; s.End-s.Start >= 2 && (src[s.Start] == '"' || src[s.Start] == '\'' || src[s.Start] == '`') {
				cf.KeyName, cf.KeyQuoted = Span{s.Start + 1, s.End - 1}, true
			}
			out.Fields = append(out.Fields, cf)
		}
	}
	return out
}
