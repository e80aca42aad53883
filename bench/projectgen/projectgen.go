// Package projectgen writes synthetic but realistic Dataform projects of a
// chosen size, for benchmarking compilers against each other.
//
// A project is a set of business "domains" (sales, marketing, ...). Each
// domain has what real projects have: declarations of raw tables, staging
// views, chains of intermediate tables (a → b → c), incremental facts and
// dimension tables with built-in assertions, tables generated in JavaScript
// loops, manual assertions, operations, includes used from SQLX, js {}
// blocks, pre/post operations and tags; optionally JiT actions. A shared
// calendar table is joined by many actions (fan-in to one), and overview
// tables reference many actions each (fan-out from one).
//
// The output is a pure function of Options: the same seed gives the same
// bytes, so benchmark runs on different machines compile the same project.
package projectgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultCoreVersion is the @dataform/core written to package.json when
// Options.CoreVersion is empty: the core dfd's protos are generated from.
const DefaultCoreVersion = "3.0.62"

// Options choose the project to generate.
type Options struct {
	// Actions is the number of actions the compiled graph has: tables,
	// views, incremental tables, assertions (built-in ones included),
	// operations and declarations. The generator hits it exactly.
	Actions int
	// CoreVersion is the @dataform/core dependency in package.json.
	CoreVersion string
	// JiT adds actions whose SQL is produced at run time by jitCode.
	JiT bool
	// Seed makes the project reproducible.
	Seed int64
	// BigSQLXBytes, when positive, adds one table defined in a .sqlx file
	// of about this many bytes (definitions/shared/big_mapping.sqlx, see
	// BigSQLX), counted in Actions. It needs Actions of at least 13, for
	// the calendar table it reads.
	BigSQLXBytes int
}

// BigSQLXPath is the file Options.BigSQLXBytes adds.
const BigSQLXPath = "definitions/shared/big_mapping.sqlx"

// Counts are the actions of a generated project by kind, as core will
// report them in the compiled graph.
type Counts struct {
	Declarations      int
	Tables            int
	Views             int
	Incrementals      int
	Operations        int
	Assertions        int // manual assertions (SQLX, JS and JiT)
	BuiltinAssertions int // made by core from `assertions: {...}` of tables
	JiT               int // actions (counted above too) with jitCode
	Files             int // files written, package.json included
}

// Total is the number of actions in the compiled graph.
func (c Counts) Total() int {
	return c.Declarations + c.Tables + c.Views + c.Incrementals + c.Operations + c.Assertions + c.BuiltinAssertions
}

// GraphTables is the length of the compiled graph's "tables" array, which
// holds tables, views and incremental tables alike.
func (c Counts) GraphTables() int { return c.Tables + c.Views + c.Incrementals }

// GraphAssertions is the length of the compiled graph's "assertions" array.
func (c Counts) GraphAssertions() int { return c.Assertions + c.BuiltinAssertions }

// Project is a generated project held in memory.
type Project struct {
	Files  map[string]string // slash-separated path → content
	Counts Counts
}

// Plan generates the project in memory.
func Plan(opts Options) (*Project, error) {
	if opts.Actions < 1 {
		return nil, fmt.Errorf("projectgen: Actions must be at least 1, got %d", opts.Actions)
	}
	if opts.CoreVersion == "" {
		opts.CoreVersion = DefaultCoreVersion
	}
	if opts.BigSQLXBytes > 0 && opts.Actions < 13 {
		return nil, fmt.Errorf("projectgen: BigSQLXBytes needs Actions of at least 13, got %d", opts.Actions)
	}
	g := &gen{
		opts:  opts,
		rng:   rand.New(rand.NewPCG(uint64(opts.Seed), 0x6466642d62656e63)), // "dfd-benc"
		files: map[string]string{},
		used:  map[string]bool{},
	}
	g.project()
	if got := g.counts.Total(); got != opts.Actions {
		// The budget bookkeeping is meant to be exact; say so loudly if not.
		return nil, fmt.Errorf("projectgen: generated %d actions, want %d (generator bug)", got, opts.Actions)
	}
	g.counts.Files = len(g.files)
	return &Project{Files: g.files, Counts: g.counts}, nil
}

// Generate writes the project into dir, which must not exist or be empty:
// files left from an earlier, larger project would change the graph.
func Generate(dir string, opts Options) error {
	_, err := GenerateCounts(dir, opts)
	return err
}

// GenerateCounts is Generate that also reports what it wrote.
func GenerateCounts(dir string, opts Options) (Counts, error) {
	p, err := Plan(opts)
	if err != nil {
		return Counts{}, err
	}
	if err := p.Write(dir); err != nil {
		return Counts{}, err
	}
	return p.Counts, nil
}

// Write writes the project's files into dir (absent or empty).
func (p *Project) Write(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("projectgen: reading %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("projectgen: %s is not empty", dir)
	}
	names := make([]string, 0, len(p.Files))
	for name := range p.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("projectgen: %w", err)
		}
		if err := os.WriteFile(path, []byte(p.Files[name]), 0o644); err != nil {
			return fmt.Errorf("projectgen: %w", err)
		}
	}
	return nil
}

// gen is the state of one generation.
type gen struct {
	opts   Options
	rng    *rand.Rand
	files  map[string]string
	used   map[string]bool // action names taken, project-wide
	counts Counts

	calendar  *action   // the shared table most facts join: fan-in to one
	overviews []*action // one per domain, all read by the executive summary
}

// action is what later actions need to know about an earlier one.
type action struct {
	name   string
	key    string   // the unique key column
	cols   []string // output columns, key first
	entity string   // business entity, e.g. "orders"
	table  bool     // a table or incremental table (not a view or declaration)
}

func (g *gen) file(path, content string) {
	if _, dup := g.files[path]; dup {
		panic("projectgen: file written twice: " + path) // names are unique, so a bug
	}
	g.files[path] = content
}

// unique returns name, or name with a numeric suffix if it is taken.
func (g *gen) unique(name string) string {
	n := name
	for i := 2; g.used[n]; i++ {
		n = fmt.Sprintf("%s_%d", name, i)
	}
	g.used[n] = true
	return n
}

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// between returns a random int in [lo, hi].
func (g *gen) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + g.rng.IntN(hi-lo+1)
}

// project lays out the whole project and spends the action budget.
func (g *gen) project() {
	g.settings()
	budget := g.opts.Actions
	// The calendar and the executive summary cost one action each; tiny
	// projects are all domain.
	shared := budget >= 12
	if shared {
		g.calendarTable()
		budget -= 2
	}
	if g.opts.BigSQLXBytes > 0 {
		g.file(BigSQLXPath, BigSQLX(g.opts.BigSQLXBytes, g.opts.Seed, g.calendar.name))
		g.used["big_mapping"] = true
		g.counts.Tables++
		budget--
	}
	budgets := g.domainBudgets(budget)
	for i, b := range budgets {
		d := g.newDomain(i)
		d.generate(b)
	}
	if shared {
		g.execSummary()
	}
	if g.opts.JiT {
		g.jitData()
	}
}

// domainBudgets splits n actions into domains of about 120 actions, a size
// seen in real projects, with some jitter so domains differ.
func (g *gen) domainBudgets(n int) []int {
	if n <= 0 {
		return nil
	}
	k := max(1, (n+60)/120)
	out := make([]int, k)
	left := n
	for i := range k - 1 {
		base := left / (k - i)
		out[i] = base + g.between(-base/6, base/6)
		left -= out[i]
	}
	out[k-1] = left
	return out
}

func (g *gen) settings() {
	g.file("package.json", fmt.Sprintf(`{
  "name": "dfd-bench-%d-actions",
  "private": true,
  "dependencies": {
    "@dataform/core": %q
  }
}
`, g.opts.Actions, g.opts.CoreVersion))
	g.file("workflow_settings.yaml", `defaultProject: acme-analytics-bench
defaultDataset: analytics
defaultLocation: US
defaultAssertionDataset: analytics_assertions
vars:
  lookback_days: "3"
  environment: prod
  retention_days: "400"
`)
	g.file(".gitignore", "node_modules/\n")
	g.file("includes/constants.js", `// Project-wide constants, available in every SQLX and JS file as "constants".
const RAW_PROJECT = "acme-raw-landing";
const CALENDAR_START = "2015-01-01";
const REPORTING_CURRENCY = "EUR";
const LABELS = { team: "analytics", cost_center: "cc-4711" };
const BI_READER = "serviceAccount:bi-reader@acme-analytics-bench.iam.gserviceaccount.com";

module.exports = { RAW_PROJECT, CALENDAR_START, REPORTING_CURRENCY, LABELS, BI_READER };
`)
	g.file("includes/sql_helpers.js", js(`// SQL snippets shared by SQLX and JS definitions.

function centsToAmount(column) {
  return ´ROUND(SAFE_DIVIDE(${column}, 100), 2)´;
}

function inList(column, values) {
  return ´${column} IN (${values.map(v => ´'${v}'´).join(", ")})´;
}

function recentRows(column, days) {
  const lookback = days || Number(dataform.projectConfig.vars.lookback_days || "3");
  return ´${column} >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL ${lookback} DAY)´;
}

function notDeleted(alias) {
  return alias ? ´NOT COALESCE(${alias}.is_deleted, FALSE)´ : "NOT COALESCE(is_deleted, FALSE)";
}

function surrogateKey(columns) {
  return ´TO_HEX(MD5(CONCAT(${columns.map(c => ´COALESCE(CAST(${c} AS STRING), "")´).join(", '|', ")})))´;
}

function toReportingCurrency(amount, currency) {
  return ´ROUND(${amount} * IF(${currency} = '${constants.REPORTING_CURRENCY}', 1, 0.92), 2)´;
}

module.exports = { centsToAmount, inList, recentRows, notDeleted, surrogateKey, toReportingCurrency };
`))
}

// calendarTable is the shared dimension that most facts join.
func (g *gen) calendarTable() {
	g.calendar = &action{
		name:   g.unique("dim_calendar"),
		key:    "calendar_date",
		cols:   []string{"calendar_date", "calendar_year", "calendar_month", "fiscal_quarter", "is_weekend"},
		entity: "calendar",
		table:  true,
	}
	g.counts.Tables++
	g.file("definitions/shared/dim_calendar.sqlx", `config {
  type: "table",
  schema: "shared",
  description: "One row per calendar day with fiscal attributes; joined by most facts.",
  bigquery: {
    partitionBy: "calendar_date",
    labels: { ...constants.LABELS, cadence: "daily" }
  },
  tags: ["shared", "daily"]
}

SELECT
  calendar_date,
  EXTRACT(YEAR FROM calendar_date) AS calendar_year,
  EXTRACT(MONTH FROM calendar_date) AS calendar_month,
  CONCAT("FY", CAST(EXTRACT(YEAR FROM DATE_ADD(calendar_date, INTERVAL 3 MONTH)) AS STRING),
         "-Q", CAST(EXTRACT(QUARTER FROM DATE_ADD(calendar_date, INTERVAL 3 MONTH)) AS STRING)) AS fiscal_quarter,
  EXTRACT(DAYOFWEEK FROM calendar_date) IN (1, 7) AS is_weekend
FROM UNNEST(GENERATE_DATE_ARRAY(DATE("${constants.CALENDAR_START}"), DATE_ADD(CURRENT_DATE(), INTERVAL 1 YEAR))) AS calendar_date
`)
}

// execSummary reads every domain's overview: one action referencing many.
func (g *gen) execSummary() {
	name := g.unique("exec_summary")
	g.counts.Tables++
	var b strings.Builder
	b.WriteString(`config {
  type: "table",
  schema: "reporting",
  description: "Row counts of every domain overview, for the executive dashboard.",
  tags: ["reporting", "daily"]
}

`)
	if len(g.overviews) == 0 {
		b.WriteString("SELECT CURRENT_TIMESTAMP() AS refreshed_at\n")
	}
	for i, o := range g.overviews {
		if i > 0 {
			b.WriteString("UNION ALL\n")
		}
		fmt.Fprintf(&b, "SELECT %q AS domain, SUM(row_count) AS row_count FROM ${ref(%q)}\n",
			strings.TrimSuffix(o.name, "_overview"), o.name)
	}
	g.file("definitions/shared/"+name+".sqlx", b.String())
}

// jitData gives JiT functions project-level data as jctx.data.
func (g *gen) jitData() {
	g.file("definitions/shared/jit_data.js", `// Data handed to every JiT function as jctx.data.
jitData("lookback_days", Number(dataform.projectConfig.vars.lookback_days));
dataform.jitData("retention", {
  days: Number(dataform.projectConfig.vars.retention_days),
  environment: dataform.projectConfig.vars.environment
});
`)
}

// js turns "´" into a backtick. Generated JavaScript and SQLX are full of
// template literals, which Go raw strings cannot hold.
func js(s string) string { return strings.ReplaceAll(s, "´", "`") }

// quoteList renders Go strings as a JavaScript array literal.
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
