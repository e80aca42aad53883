package gsql

import (
	"strings"
	"sync"

	googlesql "github.com/goccy/go-googlesql"
)

// A statement GoogleSQL's parser rejects is a syntax error: GoogleSQL's
// parser is BigQuery's own, so what it rejects BigQuery rejects too —
// except where BigQuery runs statements the open-source parser does not
// have (yet), listed in notYetInGoogleSQL, and the few places where dfd
// cannot tell (parseDoubt). Those stay hints: a certain error must be
// certain.

// notYetKind is a kind of statement BigQuery runs and GoogleSQL's parser
// (go-googlesql v0.3.0) does not know.
type notYetKind struct {
	// Kind is what the hint names: "GoogleSQL does not know <Kind> yet".
	Kind string
	// Lead are the statement's leading keywords; a word in brackets is
	// optional ("CREATE [OR] [REPLACE] RESERVATION").
	Lead string
	// Has is a keyword the statement has after Lead ("" for none): ALTER
	// SCHEMA is known, its ADD REPLICA is not.
	Has string
	// Fixture is a statement of the kind, after BigQuery's reference page
	// Source: the test checks that GoogleSQL rejects it and that it is
	// recognised.
	Fixture, Source string
}

const ddlRef = "https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language"

// notYetInGoogleSQL are the kinds of statement BigQuery documents whose
// syntax GoogleSQL's parser rejects: found by parsing every statement
// form of BigQuery's DDL, DML, DCL, procedural-language and query
// reference (testdata/sql/bigquery_valid.json, TestNotYetInGoogleSQL).
// A statement of one of these kinds is not analysed, and not an error.
// Add a kind here (with its fixture) when BigQuery adds one GoogleSQL's
// parser lacks; remove it when go-googlesql parses it.
var notYetInGoogleSQL = []notYetKind{
	{Kind: "ALTER PROJECT statements", Lead: "ALTER PROJECT",
		Fixture: "ALTER PROJECT myproject SET OPTIONS (`region-us.default_time_zone` = 'America/Los_Angeles')", Source: ddlRef + "#alter_project_set_options_statement"},
	{Kind: "ALTER ORGANIZATION statements", Lead: "ALTER ORGANIZATION",
		Fixture: "ALTER ORGANIZATION SET OPTIONS (`region-us.default_time_zone` = 'America/Chicago')", Source: ddlRef + "#alter_organization_set_options_statement"},
	{Kind: "ALTER BI_CAPACITY statements", Lead: "ALTER BI_CAPACITY",
		Fixture: "ALTER BI_CAPACITY `my-project.region-us.default` SET OPTIONS (size_gb = 250)", Source: ddlRef + "#alter_bi_capacity_set_options_statement"},
	{Kind: "CREATE CAPACITY statements", Lead: "CREATE [OR] [REPLACE] CAPACITY",
		Fixture: "CREATE CAPACITY `admin_project.region-us.my-commitment` OPTIONS (slot_count = 100, plan = 'FLEX')", Source: ddlRef + "#create_capacity_statement"},
	{Kind: "ALTER CAPACITY statements", Lead: "ALTER CAPACITY",
		Fixture: "ALTER CAPACITY `admin_project.region-us.my-commitment` SET OPTIONS (plan = 'THREE_YEAR')", Source: ddlRef + "#alter_capacity_set_options_statement"},
	{Kind: "DROP CAPACITY statements", Lead: "DROP CAPACITY",
		Fixture: "DROP CAPACITY IF EXISTS `admin_project.region-us.my-commitment`", Source: ddlRef + "#drop_capacity_statement"},
	{Kind: "CREATE RESERVATION statements", Lead: "CREATE [OR] [REPLACE] RESERVATION",
		Fixture: "CREATE RESERVATION `admin_project.region-us.prod` OPTIONS (slot_capacity = 100)", Source: ddlRef + "#create_reservation_statement"},
	{Kind: "ALTER RESERVATION statements", Lead: "ALTER RESERVATION",
		Fixture: "ALTER RESERVATION `admin_project.region-us.prod` SET OPTIONS (slot_capacity = 200)", Source: ddlRef + "#alter_reservation_set_options_statement"},
	{Kind: "DROP RESERVATION statements", Lead: "DROP RESERVATION",
		Fixture: "DROP RESERVATION `admin_project.region-us.prod`", Source: ddlRef + "#drop_reservation_statement"},
	{Kind: "CREATE ASSIGNMENT statements", Lead: "CREATE [OR] [REPLACE] ASSIGNMENT",
		Fixture: "CREATE ASSIGNMENT `admin_project.region-us.prod.my_assignment` OPTIONS (assignee = 'projects/my_project', job_type = 'QUERY')", Source: ddlRef + "#create_assignment_statement"},
	{Kind: "DROP ASSIGNMENT statements", Lead: "DROP ASSIGNMENT",
		Fixture: "DROP ASSIGNMENT `admin_project.region-us.prod.my_assignment`", Source: ddlRef + "#drop_assignment_statement"},
	{Kind: "ALTER SCHEMA … ADD REPLICA statements", Lead: "ALTER SCHEMA", Has: "ADD REPLICA",
		Fixture: "ALTER SCHEMA mydataset ADD REPLICA `us-east4` OPTIONS (location = 'us-east4')", Source: ddlRef + "#alter_schema_add_replica_statement"},
	{Kind: "ALTER SCHEMA … DROP REPLICA statements", Lead: "ALTER SCHEMA", Has: "DROP REPLICA",
		Fixture: "ALTER SCHEMA mydataset DROP REPLICA `us-east4`", Source: ddlRef + "#alter_schema_drop_replica_statement"},
	{Kind: "CREATE DATA_POLICY statements", Lead: "CREATE [OR] [REPLACE] DATA_POLICY",
		Fixture: "CREATE OR REPLACE DATA_POLICY `myproject.region-us.policy` OPTIONS (data_policy_type = 'DATA_MASKING_POLICY', masking_expression = 'SHA256')", Source: ddlRef + "#create_data_policy_statement"},
	{Kind: "ALTER DATA_POLICY statements", Lead: "ALTER DATA_POLICY",
		Fixture: "ALTER DATA_POLICY `myproject.region-us.policy` SET OPTIONS (masking_expression = 'ALWAYS_NULL')", Source: ddlRef + "#alter_data_policy_statement"},
	{Kind: "DROP DATA_POLICY statements", Lead: "DROP DATA_POLICY",
		Fixture: "DROP DATA_POLICY `myproject.region-us.policy`", Source: ddlRef + "#drop_data_policy_statement"},
}

// matches reports whether the words (upper case) of a statement, from
// its first, are of kind k.
func (k notYetKind) matches(words []string) bool {
	i := 0
	for _, w := range strings.Fields(k.Lead) {
		opt := strings.HasPrefix(w, "[")
		w = strings.Trim(w, "[]")
		if i < len(words) && words[i] == w {
			i++
			continue
		}
		if !opt {
			return false
		}
	}
	if k.Has == "" {
		return true
	}
	has := strings.Fields(k.Has)
	for j := i; j+len(has) <= len(words); j++ {
		if equalWords(words[j:j+len(has)], has) {
			return true
		}
	}
	return false
}

func equalWords(a, b []string) bool {
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// statementStarts are the keywords after which a statement of a script
// starts (besides ";" and the text's start): a block's or a branch's body.
var statementStarts = map[string]bool{"BEGIN": true, "THEN": true, "ELSE": true, "DO": true, "LOOP": true, "REPEAT": true}

// notYetKindAt is the kind of the statement of text that holds byte
// offset off (where GoogleSQL's parser stopped), if it is one of
// notYetInGoogleSQL.
func notYetKindAt(text string, off int) (notYetKind, bool) {
	toks, err := Tokens(text)
	if err != nil {
		return notYetKind{}, false // a text dfd cannot split into tokens: GoogleSQL's error stands
	}
	// The words of the statement holding off: from the last ";" before
	// it to the first ";" after it.
	var words []string
	var starts []int // indexes into words where a statement may start
	starts = append(starts, 0)
	for _, t := range toks {
		if t.Kind == Comment {
			continue
		}
		if t.Kind == Punct && text[t.Start:t.End] == ";" {
			if t.Start >= off {
				break
			}
			words, starts = nil, []int{0}
			continue
		}
		w := "\x00" // not a word: no keyword matches it
		if t.Kind == Word {
			w = strings.ToUpper(text[t.Start:t.End])
		}
		words = append(words, w)
		if statementStarts[w] && t.Start < off {
			starts = append(starts, len(words))
		}
	}
	for _, s := range starts {
		for _, k := range notYetInGoogleSQL {
			if k.matches(words[s:]) {
				return k, true
			}
		}
	}
	return notYetKind{}, false
}

// parseDoubt says why GoogleSQL's parse error p, at byte offset off of
// text, is not certain to be BigQuery's: "" when it is.
func parseDoubt(text string, p *Problem, off int) string {
	if k, ok := notYetKindAt(text, off); ok {
		return "GoogleSQL does not know " + k.Kind + " yet; not analysed"
	}
	rest := text[min(off, len(text)):]
	switch {
	case legacySQL(text):
		// BigQuery reads a query that starts with #legacySQL as legacy
		// SQL ([project:dataset.table]), a language GoogleSQL is not.
		return "it is legacy SQL (#legacySQL), a language GoogleSQL does not parse; not analysed"
	case strings.HasPrefix(rest, "\uFEFF"):
		// A byte order mark outside a string: BigQuery's front end may
		// drop it before its parser sees it.
		return "it has a byte order mark (U+FEFF), which GoogleSQL's parser does not take and BigQuery may; not analysed"
	case (strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "*")) && off > 0 && (isIdentPart(text[off-1]) || text[off-1] == '`'):
		// mydataset.my-table, project.region-us.INFORMATION_SCHEMA.X,
		// dataset.events_*: BigQuery's rules for dashes and wildcards in
		// unquoted table names are looser in places than GoogleSQL's.
		return "it writes a table name with a dash or a wildcard without backticks, which GoogleSQL's parser does not take here and BigQuery may; not analysed"
	}
	if parsesInDevelopment(text) {
		// MATCH_RECOGNIZE, GRAPH_TABLE, …: BigQuery runs syntax that
		// GoogleSQL's parser has only among features in development.
		return "GoogleSQL parses it only with language features still in development (" + p.Message + "); not analysed"
	}
	return ""
}

// legacySQL reports whether text starts with BigQuery's #legacySQL
// prefix (blanks and comments before it allowed).
func legacySQL(text string) bool {
	toks, err := Tokens(text)
	if err != nil {
		// An unclosed string further on: the prefix is still the first
		// line's business.
		first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
		return strings.EqualFold(strings.TrimSpace(first), "#legacySQL")
	}
	for _, t := range toks {
		if t.Kind != Comment {
			return false
		}
		if strings.EqualFold(strings.TrimSpace(text[t.Start:t.End]), "#legacySQL") {
			return true
		}
	}
	return false
}

var (
	devParserOnce sync.Once
	devParser     *googlesql.ParserOptions
)

// parsesInDevelopment reports whether GoogleSQL's parser takes text with
// every language feature, the ones in development included.
func parsesInDevelopment(text string) bool {
	devParserOnce.Do(func() {
		lang, err := googlesql.NewLanguageOptions()
		if err != nil {
			return
		}
		if lang.EnableMaximumLanguageFeaturesForDevelopment() != nil || lang.SetSupportsAllStatementKinds() != nil ||
			lang.SetProductMode(googlesql.ProductModeProductExternal) != nil {
			return
		}
		devParser, _ = googlesql.NewParserOptions2(nil, nil, lang)
	})
	if devParser == nil {
		return false
	}
	wasmGarbage(text)
	_, err := googlesql.ParseScript(text, devParser, nil)
	return err == nil
}

// syntaxProblem is what a parse error of text is: a certain syntax error,
// a warning for an object kind GoogleSQL and dfd do not know, or (why
// set) a statement dfd does not analyse.
func syntaxProblem(text string, perr error) (p *Problem, why string) {
	p = problemOf(perr.Error())
	off := 0
	if p.Line > 0 {
		off = Offset(text, p.Line, p.Column)
	}
	if why := parseDoubt(text, p, off); why != "" {
		return nil, why
	}
	p.Kind = SyntaxError
	if strings.Contains(p.Message, "is not a supported object type") || strings.Contains(p.Message, "is not a supported nested object type") {
		// CREATE TABEL: no kind of object BigQuery documents
		// (notYetInGoogleSQL has those), but BigQuery may have added one
		// since: a warning, not an error.
		p.Kind = OtherError
		p.Message += " (nor one BigQuery documents)"
	}
	return p, ""
}
