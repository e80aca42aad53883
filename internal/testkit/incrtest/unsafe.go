package incrtest

import (
	"sort"
	"strings"
)

// UnsafeCase is a definitions file (UnsafeFile) that reaches outside its
// own actions, and what marks it unsafe for incremental compiles (Why,
// part of the reason; "" for a file that does nothing of the kind). Its
// project also has a.js, which sets the global counter, the includes
// module constants, and c.sqlx, which refs b and must stay safe.
type UnsafeCase struct {
	Name, Code, Why string
}

// UnsafeFile is the file of an UnsafeCase.
const UnsafeFile = "definitions/b.js"

// UnsafeCases are the ways a file is found to reach outside its actions.
func UnsafeCases() []UnsafeCase {
	return []UnsafeCase{
		{"sets a global", "globalThis.shared = 1;\n", "sets the global shared"},
		{"sets a global by assignment", "shared2 = [];\n", "sets the global shared2"},
		{"changes a key of includes", "constants.limit = 2;\n", "changes the global object constants"},
		{"adds a key to includes", "constants.extra = 1;\n", "changes the global object constants"},
		{"replaces an includes module", "globalThis.constants = { limit: 1 };\n", "changes the global constants"},
		{"changes a global another file set", "globalThis.counter = 2;\n", "changes the global counter"},
		{"deletes a global", "delete globalThis.counter;\n", "removes a global"},
		{"changes another file's action", "dataform.actions[0].tags([\"x\"]);\n", "changes an action of definitions/a.js"},
		{"plain", "const local = 1;\n", ""},
	}
}

// Files is the case's project.
func (c UnsafeCase) Files() map[string]string {
	return map[string]string{
		"workflow_settings.yaml": "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\n",
		"includes/constants.js":  "module.exports = { limit: 1 };\n",
		"definitions/a.js":       "globalThis.counter = 1;\npublish(\"a\", { type: \"view\" }).query(\"select 1 as v\");\n",
		UnsafeFile:               c.Code + "publish(\"b\", { type: \"view\" }).query(\"select 2 as v\");\n",
		"definitions/c.sqlx":     "config { type: \"view\" }\nselect * from ${ref(\"b\")}\n",
	}
}

// Paths are the case's files, sorted.
func (c UnsafeCase) Paths() []string {
	var out []string
	for name := range c.Files() {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Matches says whether why, the reason given for the file, is the case's.
func (c UnsafeCase) Matches(why string) bool {
	if c.Why == "" {
		return why == ""
	}
	return strings.Contains(why, c.Why)
}
