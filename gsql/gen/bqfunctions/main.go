// Command bqfunctions writes gsql/bigquery_functions.txt (and the same
// list to source/highlight/bigquery_functions.txt), every function name
// BigQuery documents, from two sources:
//
//  1. the npm package sql-formatter (SQLFormatterSpec), whose BigQuery
//     dialect lists the functions of each page of BigQuery's GoogleSQL
//     reference under that page's URL
//     (dist/esm/languages/bigquery/bigquery.functions.js). Only the names
//     under a standard-sql page are taken: its legacy-SQL section (NOW,
//     HOST, …: not GoogleSQL) and its keyword entries (OPTIONS, PIVOT, …)
//     are left out;
//  2. gsql/gen/bqfunctions/bigquery_docs.txt: the names BigQuery's
//     reference documents that sql-formatter's list lacks, each under the
//     page that documents it.
//
// Usage, from the repository root:
//
//	go run ./gsql/gen/bqfunctions           # write both lists
//	go run ./gsql/gen/bqfunctions -check    # fail when either is stale
//
// sql-formatter is installed once into the test cache by tools/npm/ensure.sh
// (-sqlformatter DIR uses a package directory you have instead).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// SQLFormatterSpec is the sql-formatter release the list is made from.
const SQLFormatterSpec = "sql-formatter@15.9.0"

const (
	sqlFormatterFile = "dist/esm/languages/bigquery/bigquery.functions.js"
	docsFile         = "gsql/gen/bqfunctions/bigquery_docs.txt"
	outFile          = "gsql/bigquery_functions.txt"
	standardSQLPage  = "https://cloud.google.com/bigquery/docs/reference/standard-sql/"
)

var nameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*(\.[A-Z][A-Z0-9_]*)*$`)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "fail when "+outFile+" is stale instead of writing it")
	pkg := flag.String("sqlformatter", "", "directory of the "+SQLFormatterSpec+" package (default: install it with tools/npm/ensure.sh)")
	flag.Parse()
	if err := run(*root, *pkg, *check); err != nil {
		fmt.Fprintln(os.Stderr, "bqfunctions:", err)
		os.Exit(1)
	}
}

func run(root, pkg string, check bool) error {
	if pkg == "" {
		cmd := exec.Command("bash", filepath.Join(root, "tools", "npm", "ensure.sh"), SQLFormatterSpec)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("installing %s: %w", SQLFormatterSpec, err)
		}
		pkg = strings.TrimSpace(string(out))
	}
	js, err := os.ReadFile(filepath.Join(pkg, sqlFormatterFile))
	if err != nil {
		return err
	}
	fromFormatter, sections, legacy, err := parseSQLFormatter(js)
	if err != nil {
		return fmt.Errorf("%s %s: %w", SQLFormatterSpec, sqlFormatterFile, err)
	}
	// A format this parser does not know must fail, not shrink the list.
	if sections < 20 || len(fromFormatter) < 250 || !legacy {
		return fmt.Errorf("%s %s: found %d names in %d standard-sql sections (legacy section seen: %v): the file's format changed",
			SQLFormatterSpec, sqlFormatterFile, len(fromFormatter), sections, legacy)
	}
	docs, err := os.ReadFile(filepath.Join(root, docsFile))
	if err != nil {
		return err
	}
	fromDocs, err := parseDocs(docs)
	if err != nil {
		return fmt.Errorf("%s: %w", docsFile, err)
	}
	fresh, err := generate(fromFormatter, fromDocs)
	if err != nil {
		return err
	}
	for _, out := range outFiles {
		path := filepath.Join(root, out)
		old, _ := os.ReadFile(path)
		if bytes.Equal(old, fresh) {
			continue
		}
		if check {
			return fmt.Errorf("%s is stale: run 'go run ./gsql/gen/bqfunctions' and commit the result", out)
		}
		if err := os.WriteFile(path, fresh, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// outFiles get the same list: gsql's analyzer reads one, and the
// highlighter behind semantic tokens the other (package lsp must not link
// GoogleSQL, so it cannot import gsql's).
var outFiles = []string{outFile, "source/highlight/bigquery_functions.txt"}

// parseSQLFormatter returns the names sql-formatter lists under a
// standard-sql page of BigQuery's reference. Its file is one array of
// quoted names in sections, each opened by a comment: a standard-sql URL,
// the legacy-SQL URL, or a word ("other", "ddl", "pivot"). Commented-out
// names ("// 'CASE',") are not functions to it and are skipped.
func parseSQLFormatter(js []byte) (names []string, sections int, legacy bool, err error) {
	standard := false
	sc := bufio.NewScanner(bytes.NewReader(js))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "//# sourceMappingURL"):
		case strings.HasPrefix(line, "// '"):
			// a name it left out on purpose
		case strings.HasPrefix(line, "//"):
			comment := strings.TrimSpace(strings.TrimPrefix(line, "//"))
			standard = strings.HasPrefix(comment, standardSQLPage)
			if standard {
				sections++
			}
			if strings.Contains(comment, "/legacy-sql") {
				legacy = true
			}
		case strings.HasPrefix(line, "'"):
			if !standard {
				continue
			}
			name := strings.TrimSuffix(strings.TrimSuffix(line, ","), "'")
			name = strings.TrimPrefix(name, "'")
			if !nameRE.MatchString(name) {
				return nil, 0, false, fmt.Errorf("unexpected entry %q", line)
			}
			names = append(names, name)
		}
	}
	return names, sections, legacy, sc.Err()
}

// parseDocs returns the names of bigquery_docs.txt: one a line, under
// "# https://…" page lines; other "#" lines are comments.
func parseDocs(text []byte) ([]string, error) {
	var names []string
	page := ""
	for i, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "# https://"):
			page = strings.TrimPrefix(line, "# ")
		case strings.HasPrefix(line, "#"):
		case !nameRE.MatchString(line):
			return nil, fmt.Errorf("line %d: %q is not a function name", i+1, line)
		case page == "":
			return nil, fmt.Errorf("line %d: %s comes before any \"# https://…\" page line", i+1, line)
		default:
			names = append(names, line)
		}
	}
	return names, nil
}

// generate is the text of bigquery_functions.txt.
func generate(fromFormatter, fromDocs []string) ([]byte, error) {
	all := map[string]bool{}
	for _, n := range fromFormatter {
		all[n] = true
	}
	formatterCount := len(all)
	seen := map[string]bool{}
	for _, n := range fromDocs {
		if all[n] && !seen[n] {
			return nil, fmt.Errorf("%s: %s is in %s's list too; remove it from %s", docsFile, n, SQLFormatterSpec, docsFile)
		}
		if seen[n] {
			return nil, fmt.Errorf("%s: %s is listed twice", docsFile, n)
		}
		seen[n] = true
		all[n] = true
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	fmt.Fprintf(&b, `# Every function name BigQuery documents: gsql.BigQueryHasFunction reads it
# after GoogleSQL's analyzer reported "Function not found". Generated by
# gsql/gen/bqfunctions (go run ./gsql/gen/bqfunctions); do not edit.
#
# Sources:
#   %d names: npm %s (MIT), %s,
#     the names it lists under the pages of BigQuery's GoogleSQL reference
#     (%s…); its legacy-SQL section and
#     keyword entries are left out.
#   %d names: %s, names BigQuery's reference
#     documents that sql-formatter lacks, each under its page.
#
# %d names; a dotted name (NET.HOST) is a namespace the analyzer already
# skips, listed for completeness.
`, formatterCount, SQLFormatterSpec, sqlFormatterFile, standardSQLPage, len(fromDocs), docsFile, len(names))
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}
