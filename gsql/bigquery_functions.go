package gsql

import (
	_ "embed"
	"strings"
	"sync"
)

// bigqueryFunctions is every function name BigQuery documents, one per
// line (see the file's header for where the list comes from). The
// analyzer consults it only after GoogleSQL reported "Function not found":
// a name BigQuery has is then a function the open-source analyzer lacks
// (CONTAINS_SUBSTR, VECTOR_SEARCH, …), never an error of the user's.
//
//go:embed bigquery_functions.txt
var bigqueryFunctions string

var bigqueryFunctionSet = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	for _, line := range strings.Split(bigqueryFunctions, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		set[strings.ToUpper(line)] = true
	}
	return set
})

// BigQueryHasFunction reports whether BigQuery documents a function of
// this name (case-insensitive; SAFE. prefix ignored).
func BigQueryHasFunction(name string) bool {
	name = strings.ToUpper(strings.TrimSpace(name))
	name = strings.TrimPrefix(name, "SAFE.")
	return bigqueryFunctionSet()[name]
}
