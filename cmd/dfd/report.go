package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// What `dfd check` and `dfd format --check` print for CI: --format picks
// text (people), json (scripts), github (workflow commands that GitHub
// Actions turns into annotations on the lines of a pull request) or sarif
// (SARIF 2.1.0, for code-scanning pages). --fail-on says which findings
// make the exit status 1.

const (
	reportText   = "text"
	reportJSON   = "json"
	reportGitHub = "github"
	reportSARIF  = "sarif"
)

// reportFlags are the --format, --json and --fail-on flags of a command.
type reportFlags struct {
	format string
	asJSON *bool // the older --json: --format json
	failOn string
}

func addReportFlags(fs *flag.FlagSet, withJSONAlias bool) *reportFlags {
	r := &reportFlags{}
	fs.StringVar(&r.format, "format", reportText, "output format: text, json, github (workflow-command annotations) or sarif (SARIF 2.1.0)")
	if withJSONAlias {
		r.asJSON = fs.Bool("json", false, "print the findings as a JSON array (the same as --format json)")
	}
	fs.StringVar(&r.failOn, "fail-on", "error", "the least severe finding that makes the exit status 1: error or warning")
	return r
}

// resolve checks the flags' values after parsing; the error is a usage
// error's message.
func (r *reportFlags) resolve() error {
	switch r.format {
	case reportText, reportJSON, reportGitHub, reportSARIF:
	default:
		return fmt.Errorf("--format: %q is not one of text, json, github, sarif", r.format)
	}
	if r.asJSON != nil && *r.asJSON {
		if r.format != reportText && r.format != reportJSON {
			return fmt.Errorf("--json and --format %s contradict each other (--json is --format json)", r.format)
		}
		r.format = reportJSON
	}
	switch r.failOn {
	case "error", "warning":
	default:
		return fmt.Errorf("--fail-on: %q is not error or warning", r.failOn)
	}
	return nil
}

// fails reports whether findings of these counts make the exit status 1.
func (r *reportFlags) fails(errs, warnings int) bool {
	return errs > 0 || (r.failOn == "warning" && warnings > 0)
}

// sortFindings orders findings by file, line and column (stable: findings
// at one place keep the analysis' order).
func sortFindings(findings []checkFinding) {
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i], findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// reportPath is how a finding's file is named in github and sarif output:
// relative to the working directory, which in a CI job is the repository's
// root (GitHub places annotations and code-scanning results by
// repository path), when the project is under it; else project-relative.
// base is what to put before a project-relative path: "" or "sub/dir/".
func reportBase(projectDir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	if real, err := filepath.EvalSymlinks(projectDir); err == nil {
		projectDir = real
	}
	rel, err := filepath.Rel(wd, projectDir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel) + "/"
}

// ghEscapeData and ghEscapeProperty escape a workflow command's message and
// property values as the Actions runner unescapes them (its
// ActionCommand.cs): without that a newline would end the command and a
// comma or colon in a file name would cut the property.
func ghEscapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghEscapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// ghCommand is the workflow command of a severity: GitHub has error,
// warning and notice.
func ghCommand(severity string) string {
	switch severity {
	case "error", "warning":
		return severity
	}
	return "notice"
}

// printGitHub writes one workflow command a finding:
//
//	::error file=definitions/x.sqlx,line=9,col=7,endLine=9,endColumn=18,title=dfd unknown-column::Unrecognized name: …
//
// base prefixes the file names (reportBase). Hints are left out unless
// hints.
func printGitHub(w io.Writer, findings []checkFinding, base string, hints bool) {
	for _, f := range findings {
		if f.Severity == "hint" && !hints {
			continue
		}
		title := "dfd"
		if f.Code != "" {
			title += " " + f.Code
		}
		props := []string{"file=" + ghEscapeProperty(base+f.File), fmt.Sprintf("line=%d", f.Line), fmt.Sprintf("col=%d", f.Column)}
		if f.EndLine > 0 {
			props = append(props, fmt.Sprintf("endLine=%d", f.EndLine))
			// GitHub takes endColumn only on a one-line span.
			if f.EndLine == f.Line && f.EndColumn > 0 {
				props = append(props, fmt.Sprintf("endColumn=%d", f.EndColumn))
			}
		}
		props = append(props, "title="+ghEscapeProperty(title))
		msg := f.Message
		if f.Action != "" {
			msg += " (" + f.Action + ")"
		}
		if f.Detail != "" {
			msg += "\n" + f.Detail
		}
		fmt.Fprintf(w, "::%s %s::%s\n", ghCommand(f.Severity), strings.Join(props, ","), ghEscapeData(msg))
	}
}

// printGitHubNotice writes a workflow command not tied to a file (a cause
// that kept dfd check from looking).
func printGitHubNotice(w io.Writer, severity, title, msg string) {
	fmt.Fprintf(w, "::%s title=%s::%s\n", ghCommand(severity), ghEscapeProperty(title), ghEscapeData(msg))
}

// rule is a kind of finding, as SARIF's reportingDescriptor lists it.
type rule struct {
	id, name, short, help string
	level                 string // SARIF's default level
}

// rules are the codes a finding of dfd check or dfd format may carry
// (sqlcheck's codes are gsql.ErrorKind values and sqlcheck's own); a code
// not listed gets a generic rule (sarifRule), so a new code never breaks
// the output.
var rules = []rule{
	{"compile", "CompilationError", "The project does not compile",
		"@dataform/core reported an error while compiling the project, at this place. dfd analyses the SQL only once the project compiles without errors, as the editor does: fix this first.", "error"},
	{"unknown-column", "UnknownColumn", "A column the tables read do not have",
		"The SQL names a column that none of the tables it reads has, according to the warehouse's schemas (the --metadata snapshot or BigQuery) and the schemas the project's own actions produce. BigQuery would reject the statement. The message names the closest column when there is one.", "error"},
	{"unknown-table", "UnknownTable", "A table that does not exist",
		"The SQL reads a table that neither the warehouse nor the project has. BigQuery would reject the statement: check the name, or the declaration of the source. A warning when only a --metadata snapshot says the table does not exist: a snapshot may be partial.", "error"},
	{"unknown-function", "UnknownFunction", "A function BigQuery does not have",
		"The SQL calls a function that is neither one of BigQuery's nor a persistent or temporary function known to dfd. BigQuery would reject the statement.", "error"},
	{"type-mismatch", "TypeMismatch", "Arguments or operands of the wrong type",
		"GoogleSQL, BigQuery's own analyzer, found no signature of a function or operator that takes these argument types, or a value of the wrong type where another is required. BigQuery would reject the statement; the candidate signatures follow the message.", "error"},
	{"sql-syntax", "SyntaxError", "SQL that does not parse",
		"GoogleSQL's parser, which BigQuery uses, rejects the statement.", "error"},
	{"not-a-query", "NotAQuery", "A table or view whose SQL is not a query",
		"A table, view or incremental table must be defined by one SELECT (or WITH) query; this one is another kind of statement, which BigQuery cannot wrap in CREATE TABLE … AS.", "error"},
	{"sql", "BigQueryRule", "A rule of BigQuery's that GoogleSQL applies the same way",
		"The analyzer rejects the statement by a rule that BigQuery applies the same way (an ambiguous column, a column neither grouped nor aggregated …). A warning: dfd cannot be sure that the warehouse's settings agree.", "warning"},
	{"sql-unsure", "UnsureFinding", "Something GoogleSQL's open-source analyzer rejects",
		"GoogleSQL's open-source analyzer rejects the statement, but it is not BigQuery: BigQuery may accept it. A hint, shown with --verbose.", "note"},
	{"sql-skipped", "NotAnalysed", "A statement dfd did not analyse",
		"dfd did not analyse this statement; the message says why (a table without a schema, syntax GoogleSQL lacks, a JiT action not run). A hint, shown with --verbose.", "note"},
	{"unformatted", "Unformatted", "A .sqlx file that dfd format would change",
		"The SQL of this file is not as GoogleSQL's formatter writes it; the position is the first line that would change. Run `dfd format FILE` to format it.", "error"},
	{"format-left-as-written", "LeftAsWritten", "SQL dfd format leaves as written",
		"dfd format left this part as written because it cannot be formatted safely (a placeholder standing for a clause, SQL GoogleSQL cannot parse, mixed line ends …); the message says why.", "warning"},
}

func findRule(code string) (rule, bool) {
	for _, r := range rules {
		if r.id == code {
			return r, true
		}
	}
	return rule{}, false
}

// SARIF 2.1.0, the parts dfd writes (sarif-schema-2.1.0.json; the test
// validates the output against it).
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                   `json:"tool"`
	Invocations        []sarifInvocation           `json:"invocations"`
	OriginalURIBaseIDs map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
	ColumnKind         string                      `json:"columnKind"`
	Results            []sarifResult               `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	ShortDescription     sarifText         `json:"shortDescription"`
	FullDescription      sarifText         `json:"fullDescription"`
	Help                 sarifText         `json:"help"`
	HelpURI              string            `json:"helpUri"`
	DefaultConfiguration map[string]string `json:"defaultConfiguration"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	ExitCode            int                 `json:"exitCode"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string    `json:"level"`
	Message sarifText `json:"message"`
}

type sarifArtifactLoc struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
	Region           sarifRegion      `json:"region"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

const (
	sarifSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	dfdHomepage    = "https://github.com/dfdtools/dfd"
	// sarifBase names the directory the results' paths are relative to.
	sarifBase = "SRCROOT"
)

func sarifLevel(severity string) string {
	switch severity {
	case "error", "warning":
		return severity
	}
	return "note"
}

// sarifReport is the findings as one SARIF run. base prefixes the file
// names (reportBase), which are relative to the working directory, given
// in originalUriBaseIds. notes are tool notifications (causes that kept
// the check from looking); exitCode is the command's.
func sarifReport(findings []checkFinding, base string, hints bool, notes []sarifNotification, exitCode int) sarifLog {
	run := sarifRun{
		Tool:       sarifTool{Driver: sarifDriver{Name: "dfd", Version: version, InformationURI: dfdHomepage, Rules: []sarifRule{}}},
		ColumnKind: "utf16CodeUnits", // dfd's columns count UTF-16 code units, as editors do
		Results:    []sarifResult{},
	}
	if wd, err := os.Getwd(); err == nil {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(wd) + "/"}
		if !strings.HasPrefix(u.Path, "/") { // Windows: C:/x → /C:/x
			u.Path = "/" + u.Path
		}
		run.OriginalURIBaseIDs = map[string]sarifArtifactLoc{sarifBase: {URI: u.String()}}
	}
	index := map[string]int{}
	ruleIndex := func(code string) int {
		if i, ok := index[code]; ok {
			return i
		}
		r, ok := findRule(code)
		if !ok {
			r = rule{id: code, name: "Finding", short: "A finding of dfd's", help: "See the message.", level: "warning"}
		}
		index[code] = len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: r.id, Name: r.name, ShortDescription: sarifText{r.short}, FullDescription: sarifText{r.help},
			Help: sarifText{r.help}, HelpURI: dfdHomepage + "/blob/main/docs/commands.md#ci-output-formats",
			DefaultConfiguration: map[string]string{"level": r.level},
		})
		return index[code]
	}
	for _, f := range findings {
		if f.Severity == "hint" && !hints {
			continue
		}
		code := f.Code
		if code == "" {
			code = "sql"
		}
		msg := f.Message
		if f.Action != "" {
			msg += " (" + f.Action + ")"
		}
		if f.Detail != "" {
			msg += "\n" + f.Detail
		}
		reg := sarifRegion{StartLine: max(f.Line, 1), StartColumn: max(f.Column, 1)}
		if f.EndLine >= reg.StartLine && f.EndLine > 0 {
			reg.EndLine = f.EndLine
			if f.EndColumn > 0 && (f.EndLine > reg.StartLine || f.EndColumn >= reg.StartColumn) {
				reg.EndColumn = f.EndColumn
			}
		}
		run.Results = append(run.Results, sarifResult{
			RuleID: code, RuleIndex: ruleIndex(code), Level: sarifLevel(f.Severity), Message: sarifText{msg},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: sarifArtifactLoc{URI: (&url.URL{Path: base + f.File}).String(), URIBaseID: sarifBase},
				Region:           reg,
			}}},
		})
	}
	run.Invocations = []sarifInvocation{{ExecutionSuccessful: exitCode == exitOK || exitCode == exitFindings, ExitCode: exitCode, Notifications: notes}}
	return sarifLog{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}}
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
