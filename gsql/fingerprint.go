package gsql

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Fingerprint is what a script means to GoogleSQL's parser, without how it
// is laid out: a digest of the parse tree's debug text with every source
// position taken out. Two texts with the same fingerprint parse into the
// same tree: they differ only in whitespace, comments, keyword case and
// the other spellings the parser does not keep (`dfd format`'s changes).
// Identifiers and literals are in the tree as written, so renaming a
// column or changing a constant changes the fingerprint.
//
// ok is false, with why, when the text does not parse (then only its
// text can be compared) or nests deeper than dfd lets GoogleSQL walk.
// err is a failure of the engine itself.
func Fingerprint(sql string) (fp string, ok bool, why string, err error) {
	if strings.TrimSpace(sql) == "" {
		return "empty", true, "", nil
	}
	if len(sql) > MaxStatementBytes {
		return "", false, fmt.Sprintf("SQL of %s is longer than the %s dfd parses", kib(len(sql)), kib(MaxStatementBytes)), nil
	}
	e, err := theEngine()
	if err != nil {
		return "", false, "", err
	}
	out, perr := e.parse(sql)
	if perr != nil {
		return "", false, "GoogleSQL cannot parse it: " + firstLine(perr.Error()), nil
	}
	if out == nil {
		return "", false, "", fmt.Errorf("the parser returned nothing")
	}
	script, err := out.Script()
	if err != nil || script == nil {
		return "", false, "", fmt.Errorf("reading the parsed script: %v", err)
	}
	// DebugString recurses once per level on the module's own stack, as
	// Unparse does (format.go's maxUnparseDepth).
	deep, err := deeperThan(script, maxUnparseDepth)
	if err != nil {
		return "", false, "", fmt.Errorf("reading the parsed script: %w", err)
	}
	if deep {
		return "", false, fmt.Sprintf("it nests more than %d levels deep", maxUnparseDepth), nil
	}
	text, err := script.DebugString(maxUnparseDepth + 1)
	if err != nil {
		return "", false, "", fmt.Errorf("printing the parse tree: %w", err)
	}
	sum := sha256.Sum256([]byte(TreeText(text)))
	return hex.EncodeToString(sum[:16]), true, "", nil
}

// positionRE is a node's source range in GoogleSQL's debug text:
// "QueryStatement [0-8]", "Identifier(a) [7-8]".
var positionRE = regexp.MustCompile(` \[\d+-\d+\]`)

// TreeText is a parse tree's debug text without its source positions,
// and with function names in lower case: BigQuery's function names are
// case-insensitive (COUNT(*) is count(*)), unlike table names, and
// column names, whose case shows in the output schema.
func TreeText(debug string) string {
	lines := strings.Split(positionRE.ReplaceAllString(debug, ""), "\n")
	for i := 0; i < len(lines); i++ {
		name := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(name, "FunctionCall") || i+1 >= len(lines) {
			continue
		}
		indent := len(lines[i]) - len(name)
		// The function's name is the PathExpression below it: its
		// Identifier lines, two levels deeper.
		if strings.TrimLeft(lines[i+1], " ") != "PathExpression" {
			continue
		}
		for j := i + 2; j < len(lines); j++ {
			id := strings.TrimLeft(lines[j], " ")
			if len(lines[j])-len(id) != indent+4 || !strings.HasPrefix(id, "Identifier(") {
				break
			}
			lines[j] = lines[j][:indent+4] + strings.ToLower(id)
		}
	}
	return strings.Join(lines, "\n")
}
