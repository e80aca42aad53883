package source

import (
	"regexp"
	"strings"
)

// CompletionKind says what is being typed at the cursor.
type CompletionKind int

const (
	CompleteNothing CompletionKind = iota
	// CompleteActionName: inside ref( / resolve( (or a name: field of
	// their object form, or a dependencies list).
	CompleteActionName
	// CompleteConfigKey: a key position of a SQLX config block.
	CompleteConfigKey
	// CompleteConfigValue: the value of "type:" in a config block.
	CompleteTypeValue
)

// Completion describes what to complete at a cursor.
type Completion struct {
	Kind CompletionKind
	// Prefix is what was typed of the word being completed.
	Prefix string
	// Replace is the span the completion replaces (the prefix).
	Replace Span
	// Quote is the quote the user opened (0 when none: the completion
	// must add quotes).
	Quote byte
	// Object is the enclosing config object for keys ("" at the top level,
	// "bigquery", "assertions").
	Object string
}

var (
	refOpenRE    = regexp.MustCompile(`(?:^|[^\w$])(?:[A-Za-z_$][\w$]*\.)?(?:ref|resolve)\s*\(\s*(?:(["'\x60])([\w.\-]*)|([\w]*))$`)
	refObjNameRE = regexp.MustCompile(`(?:ref|resolve)\s*\(\s*\{[^}]*\bname\s*:\s*(["'])([\w.\-]*)$`)
	depsRE       = regexp.MustCompile(`\b(?:dependencies|dependencyTargets)\s*:\s*\[[^\]]*(["'])([\w.\-]*)$`)
	keyPosRE     = regexp.MustCompile(`(?:^|[{,])\s*([A-Za-z_]*)$`)
	typeValueRE  = regexp.MustCompile(`\btype\s*:\s*(["'])(\w*)$`)
)

// CompletionAt analyses the text before offset. sqlx tells whether the file
// is SQLX (config keys are completed only there).
func CompletionAt(src []byte, offset int, sqlx bool) Completion {
	offset = min(max(offset, 0), len(src))
	start := max(0, offset-400)
	before := string(src[start:offset])

	if m := refObjNameRE.FindStringSubmatch(before); m != nil {
		return Completion{Kind: CompleteActionName, Prefix: m[2], Quote: m[1][0], Replace: Span{offset - len(m[2]), offset}}
	}
	if m := refOpenRE.FindStringSubmatch(before); m != nil {
		if m[1] != "" {
			return Completion{Kind: CompleteActionName, Prefix: m[2], Quote: m[1][0], Replace: Span{offset - len(m[2]), offset}}
		}
		return Completion{Kind: CompleteActionName, Prefix: m[3], Replace: Span{offset - len(m[3]), offset}}
	}
	if m := depsRE.FindStringSubmatch(before); m != nil {
		return Completion{Kind: CompleteActionName, Prefix: m[2], Quote: m[1][0], Replace: Span{offset - len(m[2]), offset}}
	}
	if !sqlx {
		return Completion{}
	}
	x := ScanSQLX(src)
	b, ok := x.BlockAt(offset)
	if !ok || b.Kind != ConfigBlock || offset < b.Body.Start {
		return Completion{}
	}
	body := string(src[b.Body.Start:offset])
	if m := typeValueRE.FindStringSubmatch(body); m != nil {
		return Completion{Kind: CompleteTypeValue, Prefix: m[2], Quote: m[1][0], Replace: Span{offset - len(m[2]), offset}}
	}
	// Which object are we in? Walk the config body tracking nesting.
	object, inString := enclosingKey(body)
	if inString {
		return Completion{}
	}
	if m := keyPosRE.FindStringSubmatch(lastStatement(body)); m != nil {
		return Completion{Kind: CompleteConfigKey, Prefix: m[1], Object: object, Replace: Span{offset - len(m[1]), offset}}
	}
	return Completion{}
}

// lastStatement is body from the last "{" or "," at the current level on
// (enough to tell a key position from a value position).
func lastStatement(body string) string {
	i := strings.LastIndexAny(body, "{,:")
	if i >= 0 && body[i] == ':' {
		return ":" // a value position
	}
	if i < 0 {
		return body
	}
	return body[i:]
}

var keyBeforeBraceRE = regexp.MustCompile(`([A-Za-z_]\w*)\s*:\s*$`)

// enclosingKey returns the key of the innermost object literal open at the
// end of body ("" for the config object itself) and whether body ends
// inside a string.
func enclosingKey(body string) (string, bool) {
	var stack []string
	var quote byte
	for i := 0; i < len(body); i++ {
		c := body[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'', '`':
			quote = c
		case '{':
			key := ""
			if m := keyBeforeBraceRE.FindStringSubmatch(body[:i]); m != nil {
				key = m[1]
			}
			stack = append(stack, key)
		case '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if quote != 0 {
		return "", true
	}
	if len(stack) == 0 {
		return "", false
	}
	return stack[len(stack)-1], false
}

// ConfigKey is a key of a SQLX config block.
type ConfigKey struct {
	Name string
	Doc  string
	// Types lists the action types it applies to; empty: all.
	Types []string
}

// ConfigKeys are the keys of a SQLX config block (@dataform/core 3.x
// configs.proto ActionConfig, with the SQLX names core accepts), by
// enclosing object ("" for the config itself).
var ConfigKeys = map[string][]ConfigKey{
	"": {
		{Name: "type", Doc: `Action type: "table", "view", "incremental", "operations", "assertion", "declaration" or "test".`},
		{Name: "name", Doc: "Action name (defaults to the file name)."},
		{Name: "schema", Doc: "Dataset (schema) the action writes to."},
		{Name: "database", Doc: "Google Cloud project the action writes to."},
		{Name: "dependencies", Doc: "Actions to run before this one, by name."},
		{Name: "tags", Doc: "Tags, for selecting actions to run."},
		{Name: "disabled", Doc: "Skip this action when running."},
		{Name: "description", Doc: "Description, also written to BigQuery."},
		{Name: "columns", Doc: "Column descriptions: {column: \"description\"}."},
		{Name: "hermetic", Doc: "The action depends only on its declared dependencies."},
		{Name: "dependOnDependencyAssertions", Doc: "Also depend on the assertions of every dependency."},
		{Name: "reservation", Doc: "BigQuery reservation to run in."},
		{Name: "assertions", Doc: "Built-in assertions: uniqueKey, uniqueKeys, nonNull, rowConditions.", Types: []string{"table", "view", "incremental"}},
		{Name: "bigquery", Doc: "BigQuery options (legacy form): partitionBy, clusterBy, labels, ….", Types: []string{"table", "view", "incremental"}},
		{Name: "partitionBy", Doc: "Partitioning expression.", Types: []string{"table", "view", "incremental"}},
		{Name: "partitionExpirationDays", Doc: "Days to keep each partition.", Types: []string{"table", "incremental"}},
		{Name: "requirePartitionFilter", Doc: "Queries must filter on the partition column.", Types: []string{"table", "incremental"}},
		{Name: "clusterBy", Doc: "Clustering columns.", Types: []string{"table", "view", "incremental"}},
		{Name: "labels", Doc: "BigQuery labels.", Types: []string{"table", "view", "incremental"}},
		{Name: "additionalOptions", Doc: "Extra OPTIONS() of the table.", Types: []string{"table", "view", "incremental"}},
		{Name: "materialized", Doc: "Create a materialized view.", Types: []string{"view"}},
		{Name: "protected", Doc: "Never rebuild the table from scratch.", Types: []string{"incremental"}},
		{Name: "uniqueKey", Doc: "Columns that identify a row; rows are merged on it.", Types: []string{"incremental"}},
		{Name: "updatePartitionFilter", Doc: "Filter limiting the partitions a merge scans.", Types: []string{"incremental"}},
		{Name: "onSchemaChange", Doc: `"IGNORE", "FAIL", "EXTEND" or "SYNCHRONIZE".`, Types: []string{"incremental"}},
		{Name: "hasOutput", Doc: "The operation creates a table or view named after the action.", Types: []string{"operations"}},
	},
	"assertions": {
		{Name: "uniqueKey", Doc: "Columns whose combination must be unique."},
		{Name: "uniqueKeys", Doc: "Several unique keys."},
		{Name: "nonNull", Doc: "Columns that must not be NULL."},
		{Name: "rowConditions", Doc: "SQL conditions every row must satisfy."},
	},
	"bigquery": {
		{Name: "partitionBy", Doc: "Partitioning expression."},
		{Name: "clusterBy", Doc: "Clustering columns."},
		{Name: "updatePartitionFilter", Doc: "Filter limiting the partitions a merge scans."},
		{Name: "labels", Doc: "BigQuery labels."},
		{Name: "partitionExpirationDays", Doc: "Days to keep each partition."},
		{Name: "requirePartitionFilter", Doc: "Queries must filter on the partition column."},
		{Name: "additionalOptions", Doc: "Extra OPTIONS() of the table."},
	},
}

// ActionTypes are the values of a SQLX config's type key.
var ActionTypes = []string{"table", "view", "incremental", "operations", "assertion", "declaration", "test"}
