// Package highlight splits Dataform files into highlighting tokens: the
// SQL and JavaScript of a SQLX file (source.ScanSQLX tells which is which)
// and the JavaScript of a project's .js files. It is a lexer, not a
// parser: it never fails, never panics and stops on any input, since an
// editor asks for tokens of whatever is typed, half-finished code
// included.
//
// Tokens are byte ranges of the file, sorted and never overlapping; the
// kinds are LSP's standard semantic token types, so that every client's
// theme colours them (the LSP layer only encodes them).
package highlight

// Kind is the kind of a token. Its String is the LSP token type.
type Kind uint8

const (
	Keyword Kind = iota
	Function
	Method
	Variable
	Parameter
	Property
	Type
	String
	Number
	Regexp
	Comment
	Operator
	Macro
	numKinds
)

var kindNames = [numKinds]string{
	Keyword: "keyword", Function: "function", Method: "method", Variable: "variable",
	Parameter: "parameter", Property: "property", Type: "type", String: "string",
	Number: "number", Regexp: "regexp", Comment: "comment", Operator: "operator", Macro: "macro",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "?"
}

// Kinds are the token types in the order of their Kind values: an LSP
// legend's tokenTypes.
func Kinds() []string { return append([]string(nil), kindNames[:]...) }

// Mods is a set of token modifiers, one bit each (bit i is Modifiers()[i]).
type Mods uint8

const (
	// DefaultLibrary marks Dataform's built-ins (ref, self, publish, …)
	// and BigQuery's functions.
	DefaultLibrary Mods = 1 << iota
	// Declaration marks the name a const, let, var, function or class
	// declares.
	Declaration
	// Readonly marks the name a const declares.
	Readonly
)

var modNames = []string{"defaultLibrary", "declaration", "readonly"}

// Modifiers are the modifier names, bit 0 first: an LSP legend's
// tokenModifiers.
func Modifiers() []string { return append([]string(nil), modNames...) }

// Token is one highlighted range [Start, End) of a file.
type Token struct {
	Start, End int
	Kind       Kind
	Mods       Mods
}
