package projectgen

import (
	"fmt"
	"slices"
	"strings"
)

// catalog is the business domains a project is made of. The first entity
// of each is its hub: every other entity carries the hub's key, and many
// intermediate tables join the hub's staging view (fan-in to one).
var catalog = []struct {
	name     string
	entities []string
}{
	{"sales", []string{"orders", "order_items", "customers", "payments", "refunds", "carts", "discounts", "invoices"}},
	{"marketing", []string{"campaigns", "ad_clicks", "impressions", "leads", "conversions", "emails", "landing_pages", "audiences"}},
	{"inventory", []string{"products", "warehouses", "stock_movements", "suppliers", "purchase_orders", "shipments", "returns", "bins"}},
	{"finance", []string{"accounts", "ledger_lines", "budgets", "exchange_rates", "cost_centers", "payouts", "tax_codes", "journals"}},
	{"support", []string{"tickets", "agents", "ticket_events", "csat_responses", "sla_rules", "macros", "chats", "calls"}},
	{"logistics", []string{"deliveries", "routes", "drivers", "vehicles", "depots", "parcels", "tracking_events", "carriers"}},
	{"hr", []string{"employees", "departments", "positions", "absences", "payroll_runs", "reviews", "trainings", "candidates"}},
	{"product", []string{"sessions", "events", "features", "experiments", "assignments", "pageviews", "devices", "releases"}},
}

// regions name the extra copies of an entity when a domain has more
// sources than its catalogue lists (orders_eu, orders_us, ...).
var regions = []string{"eu", "us", "apac", "latam", "mea", "uk", "ca", "au"}

// attrPool is the columns raw tables get besides keys and timestamps.
var attrPool = []string{"customer_id", "account_id", "status", "amount_cents", "currency", "country_code",
	"channel", "quantity", "region", "source_system", "priority", "category", "owner_id", "is_deleted"}

var statusPool = []string{"active", "open", "paid", "shipped", "approved", "delivered", "resolved", "won"}

var colDescriptions = map[string]string{
	"customer_id":   "Customer the row belongs to",
	"account_id":    "Billing account",
	"status":        "Lifecycle status",
	"amount_cents":  "Amount in minor units of currency",
	"amount":        "Amount in major units of currency",
	"currency":      "ISO 4217 currency code",
	"country_code":  "ISO 3166-1 alpha-2 country",
	"channel":       "Acquisition or sales channel",
	"quantity":      "Number of units",
	"region":        "Sales region",
	"source_system": "System that exported the row",
	"priority":      "Priority, 1 (highest) to 5",
	"category":      "Business category",
	"owner_id":      "Employee who owns the row",
	"is_deleted":    "Soft-delete flag",
	"created_at":    "When the row was created in the source",
	"updated_at":    "Last change of the row in the source",
	"row_count":     "Rows aggregated into this row",
}

func describe(col string) string {
	if d, ok := colDescriptions[col]; ok {
		return d
	}
	if strings.HasSuffix(col, "_id") {
		return "Identifier of the " + strings.ReplaceAll(strings.TrimSuffix(col, "_id"), "_", " ")
	}
	return strings.ReplaceAll(col, "_", " ")
}

// singular makes a key column stem of an entity: orders → order.
func singular(entity string) string {
	return strings.TrimSuffix(entity, "s")
}

type domain struct {
	g        *gen
	name     string // a JavaScript identifier; also the include's global
	entities []string
	next     int // next entity to hand out
	hubKey   string
	statuses []string

	sources     []*action
	stagingBase []*action // one staging view per source
	staging     []*action
	hub         *action // staging view of the hub entity
	chainEnds   []*action
	marts       []*action
	rollups     []*action
	rolledUp    map[string]bool
	tablesOnly  []*action // tables and incrementals, for operations that write
	jitCounter  int
	fileCounter int
}

func (g *gen) newDomain(i int) *domain {
	c := catalog[i%len(catalog)]
	name := c.name
	if i >= len(catalog) {
		name = fmt.Sprintf("%s_%d", c.name, i/len(catalog)+1)
	}
	d := &domain{
		g:        g,
		name:     name,
		entities: c.entities,
		hubKey:   singular(c.entities[0]) + "_id",
		rolledUp: map[string]bool{},
	}
	perm := g.rng.Perm(len(statusPool))
	for _, j := range perm[:g.between(2, 4)] {
		d.statuses = append(d.statuses, statusPool[j])
	}
	d.include()
	return d
}

// include writes includes/<domain>.js, used as a global from SQLX and JS.
func (d *domain) include() {
	d.g.file("includes/"+d.name+".js", render(`// Settings of the {{d}} domain, available everywhere as "{{d}}".
const RAW_DATASET = "raw_{{d}}";
const ACTIVE_STATUSES = {{statuses}};
const RETENTION_DAYS = {{retention}};
const LABELS = { team: "analytics", domain: "{{d}}" };

// Only rows in an active status reach the marts.
function activeFilter(alias) {
  return sql_helpers.inList(´${alias}.status´, ACTIVE_STATUSES);
}

function tableLabels(extra) {
  return Object.assign({}, LABELS, extra || {});
}

module.exports = { RAW_DATASET, ACTIVE_STATUSES, RETENTION_DAYS, LABELS, activeFilter, tableLabels };
`, "d", d.name, "statuses", quoteList(d.statuses), "retention", fmt.Sprint(d.g.between(90, 900))))
}

// targets is how a domain's budget is spent, phase by phase.
type targets struct {
	sources, staging, inter, marts, js, jit, asserts, ops, overview int
}

func (d *domain) targets(b int) targets {
	if b < 8 {
		s := (b + 1) / 2
		return targets{sources: s, staging: b - s}
	}
	jit := 0.0
	if d.g.opts.JiT {
		jit = 0.06
	}
	f := func(x float64) int { return int(x * float64(b)) }
	t := targets{
		sources:  max(1, f(0.14)),
		inter:    f(0.16),
		marts:    f(0.18 + 0.06 - jit),
		js:       f(0.10),
		jit:      f(jit),
		asserts:  f(0.08),
		ops:      f(0.05),
		overview: 1,
	}
	// Staging takes what rounding left, so the domain spends b exactly.
	t.staging = b - (t.sources + t.inter + t.marts + t.js + t.jit + t.asserts + t.ops + t.overview)
	return t
}

// generate spends exactly budget actions. Phases run in dependency order,
// and every reference points to an action made earlier, so the graph has
// no cycles. Each phase can spend any whole number of actions because each
// kind of unit has a variant of cost 1.
func (d *domain) generate(budget int) {
	t := d.targets(budget)
	d.sourcesPhase(t.sources)
	d.stagingPhase(t.staging)
	d.intermediatePhase(t.inter)
	d.martsPhase(t.marts)
	d.jsPhase(t.js)
	d.jitPhase(t.jit)
	d.assertionsPhase(t.asserts)
	d.operationsPhase(t.ops)
	if t.overview > 0 {
		d.overview()
	}
}

// pick returns a random action of the first non-empty pool.
func (d *domain) pick(pools ...[]*action) *action {
	for _, p := range pools {
		if len(p) > 0 {
			return p[d.g.rng.IntN(len(p))]
		}
	}
	return nil
}

func (d *domain) path(kind, name, ext string) string {
	return fmt.Sprintf("definitions/%s/%s/%s.%s", d.name, kind, name, ext)
}

// ---- sources -------------------------------------------------------------

func (d *domain) newSource() *action {
	i := d.next
	d.next++
	base := d.entities[i%len(d.entities)]
	entity := base
	if v := i / len(d.entities); v > 0 {
		entity = fmt.Sprintf("%s_%s", base, regions[(v-1)%len(regions)])
		if v > len(regions) {
			entity += fmt.Sprint((v-1)/len(regions) + 1)
		}
	}
	key := singular(base) + "_id"
	cols := []string{key}
	if key != d.hubKey {
		cols = append(cols, d.hubKey)
	}
	for _, j := range d.g.rng.Perm(len(attrPool))[:d.g.between(2, 6)] {
		if !slices.Contains(cols, attrPool[j]) {
			cols = append(cols, attrPool[j])
		}
	}
	cols = append(cols, "created_at", "updated_at")
	a := &action{name: d.g.unique(d.name + "_" + entity), key: key, cols: cols, entity: entity}
	d.sources = append(d.sources, a)
	d.g.counts.Declarations++
	return a
}

func (d *domain) sourcesPhase(n int) {
	inJS := 0
	if n >= 5 {
		inJS = n / 3
	}
	for range n - inJS {
		d.declarationSQLX(d.newSource())
	}
	if inJS > 0 {
		var srcs []*action
		for range inJS {
			srcs = append(srcs, d.newSource())
		}
		d.declarationsJS(srcs)
	}
}

func (d *domain) declarationSQLX(a *action) {
	var cols strings.Builder
	for i, c := range a.cols {
		sep := ","
		if i == len(a.cols)-1 {
			sep = ""
		}
		fmt.Fprintf(&cols, "    %s: %q%s\n", c, describe(c), sep)
	}
	d.g.file(d.path("sources", a.name, "sqlx"), render(`config {
  type: "declaration",
  database: constants.RAW_PROJECT,
  schema: {{d}}.RAW_DATASET,
  name: "{{name}}",
  description: "{{entity}} as exported by the source system, one row per version.",
  columns: {
{{cols}}  },
  tags: ["raw", "{{d}}"]
}
`, "d", d.name, "name", a.name, "entity", title(a.entity), "cols", cols.String()))
}

func (d *domain) declarationsJS(srcs []*action) {
	var list strings.Builder
	for i, a := range srcs {
		sep := ","
		if i == len(srcs)-1 {
			sep = ""
		}
		fmt.Fprintf(&list, "  { name: %q, columns: %s }%s\n", a.name, quoteList(a.cols), sep)
	}
	d.g.file(d.path("sources", "raw_tables", "js"), render(`// Raw {{d}} tables landed by the ingestion pipeline, declared in one loop.
const rawTables = [
{{list}}];

for (const table of rawTables) {
  declare({
    database: constants.RAW_PROJECT,
    schema: {{d}}.RAW_DATASET,
    name: table.name,
    description: ´Raw ${table.name.replace(/_/g, " ")}, landed hourly.´,
    columns: Object.fromEntries(table.columns.map(c => [c, ´Source column ${c}´]))
  });
}
`, "d", d.name, "list", list.String()))
}

// ---- staging -------------------------------------------------------------

func (d *domain) stagingPhase(n int) {
	left := n
	for i := 0; left > 0; i++ {
		cost := 1
		if left >= 2 && d.g.chance(0.6) {
			cost = 2 // with a built-in assertion
		}
		if i < len(d.sources) {
			d.stagingView(d.sources[i], cost == 2)
		} else {
			d.recentView(d.stagingBase[i%len(d.stagingBase)], cost == 2)
		}
		left -= cost
	}
}

func (d *domain) stagingView(src *action, assert bool) {
	a := &action{name: d.g.unique("stg_" + src.name), key: src.key, entity: src.entity}
	var sel []string
	for _, c := range src.cols {
		switch c {
		case "is_deleted":
			continue
		case "amount_cents":
			sel = append(sel, `${sql_helpers.centsToAmount("amount_cents")} AS amount`)
			a.cols = append(a.cols, "amount")
		default:
			sel = append(sel, c)
			a.cols = append(a.cols, c)
		}
	}
	assertions := ""
	if assert {
		assertions = render(`,
  assertions: {
    nonNull: ["{{key}}", "created_at"]{{rows}}
  }`, "key", a.key, "rows", d.maybe(0.5, `,
    rowConditions: ["updated_at >= created_at"]`))
		d.g.counts.BuiltinAssertions++ // nonNull and rowConditions make one assertion
	}
	where := ""
	if slices.Contains(src.cols, "is_deleted") {
		where = "WHERE ${sql_helpers.notDeleted()}\n"
	}
	dedupe := "QUALIFY ROW_NUMBER() OVER (PARTITION BY " + a.key + " ORDER BY updated_at DESC) = 1\n"
	jsBlock := ""
	if d.g.chance(0.4) {
		jsBlock = "js {\n  // The latest version of each row wins.\n  const dedupeKey = \"" + a.key + "\";\n}\n\n"
		dedupe = "QUALIFY ROW_NUMBER() OVER (PARTITION BY ${dedupeKey} ORDER BY updated_at DESC) = 1\n"
	}
	d.g.file(d.path("staging", a.name, "sqlx"), render(`config {
  type: "view",
  schema: "{{d}}_staging",
  description: "Typed, deduplicated {{entity}} from {{src}}.",
  tags: ["staging", "{{d}}"]{{assertions}}
}

{{js}}SELECT
  {{sel}}
FROM ${ref("{{src}}")}
{{where}}{{dedupe}}`, "d", d.name, "entity", strings.ReplaceAll(a.entity, "_", " "), "src", src.name,
		"assertions", assertions, "js", jsBlock, "sel", strings.Join(sel, ",\n  "), "where", where, "dedupe", dedupe))
	d.g.counts.Views++
	d.stagingBase = append(d.stagingBase, a)
	d.staging = append(d.staging, a)
	if d.hub == nil {
		d.hub = a
	}
}

// recentView is a staging view over another: a short a → b chain.
func (d *domain) recentView(base *action, assert bool) {
	a := &action{name: d.g.unique(base.name + "_recent"), key: base.key, cols: base.cols, entity: base.entity}
	assertions := ""
	if assert {
		assertions = ",\n  assertions: {\n    rowConditions: [\"updated_at >= created_at\"]\n  }"
		d.g.counts.BuiltinAssertions++
	}
	d.g.file(d.path("staging", a.name, "sqlx"), render(`config {
  type: "view",
  schema: "{{d}}_staging",
  description: "Rows of {{base}} changed within the lookback window.",
  tags: ["staging", "{{d}}", "hourly"]{{assertions}}
}

SELECT *
FROM ${ref("{{base}}")}
WHERE ${sql_helpers.recentRows("updated_at")}
`, "d", d.name, "base", base.name, "assertions", assertions))
	d.g.counts.Views++
	d.staging = append(d.staging, a)
}

// ---- intermediate chains -------------------------------------------------

var steps = []string{"enriched", "joined", "scored", "flagged", "sequenced"}

func (d *domain) intermediatePhase(n int) {
	left := n
	for left > 0 {
		prev := d.pick(d.stagingBase)
		length := d.g.between(2, 4)
		for step := 0; step < length && left > 0; step++ {
			assert := left >= 2 && d.g.chance(0.3)
			prev = d.intNode(prev, step, assert)
			left--
			if assert {
				left--
			}
		}
		d.chainEnds = append(d.chainEnds, prev)
	}
}

func (d *domain) intNode(prev *action, step int, assert bool) *action {
	kind := steps[step%len(steps)]
	a := &action{
		name:   d.g.unique(fmt.Sprintf("int_%s_%s_%s", d.name, prev.entity, kind)),
		key:    prev.key,
		cols:   slices.Clone(prev.cols),
		entity: prev.entity,
		table:  !d.g.chance(0.25),
	}
	typ := "view"
	if a.table {
		typ = "table"
		d.g.counts.Tables++
		d.tablesOnly = append(d.tablesOnly, a)
	} else {
		d.g.counts.Views++
	}
	var cfg []string
	if a.table && d.g.chance(0.5) {
		cfg = append(cfg, fmt.Sprintf("  bigquery: {\n    clusterBy: [%q]\n  }", a.key))
	}
	if assert {
		cfg = append(cfg, fmt.Sprintf("  assertions: {\n    uniqueKey: [%q]\n  }", a.key))
		d.g.counts.BuiltinAssertions++
	}
	extra := ""
	if len(cfg) > 0 {
		extra = ",\n" + strings.Join(cfg, ",\n")
	}
	var body string
	switch kind {
	case "enriched":
		join := ""
		cal := ""
		if c := d.g.calendar; c != nil {
			join = fmt.Sprintf("\nLEFT JOIN ${ref(%q)} AS cal ON cal.calendar_date = DATE(p.created_at)", c.name)
			cal = ",\n  cal.fiscal_quarter,\n  cal.is_weekend"
			a.cols = append(a.cols, "fiscal_quarter", "is_weekend")
		}
		a.cols = append(a.cols, "row_key")
		body = fmt.Sprintf(`SELECT
  p.*,
  ${sql_helpers.surrogateKey(["p.%s", "p.updated_at"])} AS row_key%s
FROM ${ref(%q)} AS p%s
`, a.key, cal, prev.name, join)
	case "joined":
		a.cols = append(a.cols, "hub_created_at")
		body = fmt.Sprintf(`SELECT
  p.*,
  h.created_at AS hub_created_at
FROM ${ref(%q)} AS p
LEFT JOIN ${ref(%q)} AS h ON h.%s = p.%s
`, prev.name, d.hub.name, d.hubKey, d.hubKey)
	case "scored":
		a.cols = append(a.cols, "score")
		where := ""
		if slices.Contains(prev.cols, "status") {
			where = fmt.Sprintf("WHERE ${%s.activeFilter(\"p\")}\n", d.name)
		}
		body = fmt.Sprintf(`js {
  // Weights agreed with the %s team.
  const weights = { recency: %.1f, base: %.1f };
}

SELECT
  p.*,
  ${weights.recency} * EXP(-TIMESTAMP_DIFF(CURRENT_TIMESTAMP(), p.updated_at, DAY) / 30) + ${weights.base} AS score
FROM ${ref(%q)} AS p
%s`, d.name, 0.5+float64(d.g.rng.IntN(5))/10, float64(d.g.rng.IntN(5))/10, prev.name, where)
	case "flagged":
		a.cols = append(a.cols, "is_stale", "has_duplicates")
		body = fmt.Sprintf(`SELECT
  p.*,
  p.updated_at < TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL ${%s.RETENTION_DAYS} DAY) AS is_stale,
  COUNT(*) OVER (PARTITION BY p.%s) > 1 AS has_duplicates
FROM ${ref(%q)} AS p
`, d.name, a.key, prev.name)
	default: // sequenced
		a.cols = append(a.cols, "seq")
		body = fmt.Sprintf(`SELECT
  p.*,
  ROW_NUMBER() OVER (PARTITION BY p.%s ORDER BY p.created_at) AS seq
FROM ${ref(%q)} AS p
`, d.hubKey, prev.name)
	}
	d.g.file(d.path("intermediate", a.name, "sqlx"), fmt.Sprintf(`config {
  type: %q,
  schema: "%s_intermediate",
  description: "%s %s, step %d of its chain.",
  tags: ["intermediate", %q]%s
}

%s`, typ, d.name, title(strings.ReplaceAll(a.entity, "_", " ")), kind, step+1, d.name, extra, body))
	return a
}

// ---- marts ----------------------------------------------------------------

func (d *domain) martsPhase(n int) {
	left := n
	for i := 0; left > 0; i++ {
		if i%2 == 0 {
			cost := min(left, 2)
			d.incremental(cost == 2)
			left -= cost
		} else {
			cost := min(left, 3)
			d.dimension(cost)
			left -= cost
		}
	}
}

func (d *domain) incremental(assert bool) {
	src := d.pick(d.chainEnds, d.stagingBase)
	a := &action{name: d.g.unique("fct_" + d.name + "_" + src.entity), key: src.key, cols: src.cols, entity: src.entity, table: true}
	d.g.counts.Incrementals++
	assertions := ""
	if assert {
		assertions = fmt.Sprintf(",\n  assertions: {\n    uniqueKey: [%q]\n  }", a.key)
		d.g.counts.BuiltinAssertions++
	}
	calSel, calJoin := "", ""
	if c := d.g.calendar; c != nil {
		calSel = ",\n  cal.calendar_year"
		calJoin = fmt.Sprintf("\nJOIN ${ref(%q)} AS cal ON cal.calendar_date = DATE(e.created_at)", c.name)
	}
	where := "WHERE TRUE"
	if slices.Contains(src.cols, "status") {
		where = fmt.Sprintf("WHERE ${%s.activeFilter(\"e\")}", d.name)
	}
	require := ""
	if d.g.chance(0.3) {
		require = "\n    requirePartitionFilter: true,"
	}
	d.g.file(d.path("marts", a.name, "sqlx"), render(`config {
  type: "incremental",
  schema: "{{d}}_marts",
  uniqueKey: ["{{key}}"],
  description: "{{entity}} merged incrementally on {{key}}.",
  bigquery: {
    partitionBy: "DATE(created_at)",
    clusterBy: ["{{key}}"],
    updatePartitionFilter: "created_at >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)",{{require}}
    labels: {{d}}.tableLabels({ tier: "gold" })
  },
  tags: ["marts", "{{d}}", "hourly"]{{assertions}}
}

pre_operations {
  DECLARE watermark DEFAULT (
    ${when(incremental(),
      ´SELECT COALESCE(MAX(updated_at), TIMESTAMP("1970-01-01")) FROM ${self()}´,
      ´SELECT TIMESTAMP("1970-01-01")´)}
  )
}

SELECT
  e.*{{calSel}}
FROM ${ref("{{src}}")} AS e{{calJoin}}
{{where}}
${when(incremental(), ´AND e.updated_at > watermark AND ${sql_helpers.recentRows("e.updated_at", 7)}´)}

post_operations {
  ALTER TABLE ${self()} SET OPTIONS (description = "Loaded by ${name()} into ${schema()}")
}
`, "d", d.name, "key", a.key, "entity", title(strings.ReplaceAll(a.entity, "_", " ")), "require", require,
		"assertions", assertions, "calSel", calSel, "calJoin", calJoin, "src", src.name, "where", where))
	d.marts = append(d.marts, a)
	d.tablesOnly = append(d.tablesOnly, a)
}

// dimension joins up to three upstream models: one action referencing many.
// cost 3 has uniqueKey and rowConditions assertions, 2 uniqueKey only.
func (d *domain) dimension(cost int) {
	main := d.pick(d.chainEnds, d.stagingBase)
	joins := []*action{main}
	for _, c := range d.g.rng.Perm(len(d.chainEnds)) {
		if len(joins) == 3 {
			break
		}
		// One join per entity: two chains of the same entity would give
		// the same column alias twice.
		if e := d.chainEnds[c]; !slices.ContainsFunc(joins, func(j *action) bool { return j.entity == e.entity }) {
			joins = append(joins, e)
		}
	}
	a := &action{
		name:   d.g.unique("dim_" + d.name + "_" + main.entity),
		key:    main.key,
		cols:   []string{main.key, d.hubKey, "created_at", "updated_at", "row_count"},
		entity: main.entity,
		table:  true,
	}
	if a.key == d.hubKey {
		a.cols = slices.Delete(a.cols, 1, 2)
	}
	d.g.counts.Tables++
	d.g.counts.BuiltinAssertions += cost - 1
	var asserts []string
	if cost >= 2 {
		asserts = append(asserts, fmt.Sprintf("    uniqueKey: [%q]", a.key))
	}
	if cost >= 3 {
		asserts = append(asserts, fmt.Sprintf("    nonNull: [%q]", a.key), `    rowConditions: ["row_count > 0", "updated_at >= created_at"]`)
	}
	assertions := ""
	if len(asserts) > 0 {
		assertions = ",\n  assertions: {\n" + strings.Join(asserts, ",\n") + "\n  }"
	}
	var cols strings.Builder
	for _, c := range a.cols {
		fmt.Fprintf(&cols, "    %s: %q,\n", c, describe(c))
	}
	sel := []string{"m." + a.key}
	if a.key != d.hubKey {
		sel = append(sel, "ANY_VALUE(m."+d.hubKey+") AS "+d.hubKey)
	}
	sel = append(sel, "MIN(m.created_at) AS created_at", "MAX(m.updated_at) AS updated_at", "COUNT(*) AS row_count")
	var from strings.Builder
	fmt.Fprintf(&from, "FROM ${ref(%q)} AS m\n", main.name)
	for i, j := range joins[1:] {
		alias := fmt.Sprintf("j%d", i+1)
		sel = append(sel, fmt.Sprintf("COUNT(DISTINCT %s.%s) AS %s_count", alias, j.key, singular(strings.Split(j.entity, "_")[0])))
		fmt.Fprintf(&from, "LEFT JOIN ${ref(%q)} AS %s ON %s.%s = m.%s\n", j.name, alias, alias, d.hubKey, d.hubKey)
	}
	post := ""
	if d.g.chance(0.4) {
		post = "\npost_operations {\n  GRANT `roles/bigquery.dataViewer` ON TABLE ${self()} TO \"${constants.BI_READER}\"\n}\n"
	}
	d.g.file(d.path("marts", a.name, "sqlx"), render(`config {
  type: "table",
  schema: "{{d}}_marts",
  description: "One row per {{keyStem}}, combining {{n}} upstream models.",
  columns: {
{{cols}}  },
  bigquery: {
    clusterBy: ["{{key}}"],
    labels: {{d}}.tableLabels({ tier: "silver" })
  },
  tags: ["marts", "{{d}}", "daily"]{{assertions}}
}

SELECT
  {{sel}}
{{from}}GROUP BY m.{{key}}
{{post}}`, "d", d.name, "keyStem", strings.TrimSuffix(a.key, "_id"), "n", fmt.Sprint(len(joins)), "cols", cols.String(),
		"key", a.key, "assertions", assertions, "sel", strings.Join(sel, ",\n  "), "from", from.String(), "post", post))
	d.marts = append(d.marts, a)
	d.tablesOnly = append(d.tablesOnly, a)
}

// ---- JavaScript definitions ---------------------------------------------

var grains = []struct {
	name, part string
	keepDays   int
}{{"daily", "DAY", 400}, {"weekly", "WEEK", 800}, {"monthly", "MONTH", 1500}, {"quarterly", "QUARTER", 2500}, {"yearly", "YEAR", 4000}}

func (d *domain) jsPhase(n int) {
	left := n
	for left >= 3 {
		k := min((left-1)/2, d.g.between(2, len(grains)))
		d.rollupFile(k)
		left -= 2*k + 1
	}
	for range left {
		d.jsView()
	}
}

// rollupFile writes a JS file that publishes k rollups of one mart in a loop,
// each with an assertion, plus one operation: 2k+1 actions.
func (d *domain) rollupFile(k int) {
	var base *action
	for _, pool := range [][]*action{d.marts, d.chainEnds, d.stagingBase} {
		for _, a := range pool {
			if !d.rolledUp[a.name] {
				base = a
				break
			}
		}
		if base != nil {
			break
		}
	}
	if base == nil {
		base = d.pick(d.marts, d.chainEnds, d.stagingBase)
	}
	d.rolledUp[base.name] = true
	stem := "agg_" + strings.TrimPrefix(strings.TrimPrefix(base.name, "fct_"), "dim_")
	if d.taken(stem, k) {
		stem = "agg_" + base.name
	}
	for d.taken(stem, k) {
		stem += "_x"
	}
	var list strings.Builder
	for i, gr := range grains[:k] {
		name := stem + "_" + gr.name
		d.g.used[name] = true
		d.g.used[name+"_not_empty"] = true
		d.rollups = append(d.rollups, &action{name: name, key: "period_start", cols: []string{"period_start", "row_count"}, entity: base.entity, table: true})
		sep := ","
		if i == k-1 {
			sep = ""
		}
		fmt.Fprintf(&list, "  { name: %q, part: %q, keepDays: %d }%s\n", gr.name, gr.part, gr.keepDays, sep)
	}
	op := d.g.unique("op_" + strings.TrimPrefix(stem, "agg_") + "_rollups_refreshed")
	d.g.counts.Tables += k
	d.g.counts.Assertions += k
	d.g.counts.Operations++
	d.fileCounter++
	d.g.file(d.path("js", fmt.Sprintf("rollups_%d", d.fileCounter), "js"), render(`// Rollups of {{base}} at several grains, generated in a loop. Each rollup
// gets a "not empty" check; one operation records the refresh of all.
const grains = [
{{list}}];

for (const grain of grains) {
  const rollupName = ´{{stem}}_${grain.name}´;
  publish(rollupName, {
    type: "table",
    schema: "{{d}}_marts",
    description: ´{{base}} rolled up by ${grain.name} period.´,
    bigquery: {
      partitionBy: "period_start",
      labels: {{d}}.tableLabels({ grain: grain.name })
    },
    tags: ["rollup", "{{d}}", grain.name]
  }).query(ctx => ´
SELECT
  DATE_TRUNC(DATE(created_at), ${grain.part}) AS period_start,
  COUNT(*) AS row_count,
  COUNT(DISTINCT {{key}}) AS distinct_keys,
  MAX(updated_at) AS last_updated
FROM ${ctx.ref("{{base}}")}
WHERE DATE(created_at) >= DATE_SUB(CURRENT_DATE(), INTERVAL ${grain.keepDays} DAY)
GROUP BY 1´);

  assert(´${rollupName}_not_empty´, {
    description: ´${rollupName} must not be empty.´,
    tags: ["quality", "{{d}}"]
  }).query(ctx => ´SELECT 1 AS missing FROM ${ctx.ref(rollupName)} HAVING COUNT(*) = 0´);
}

operate("{{op}}", {
  description: "Records that the rollups of {{base}} were rebuilt.",
  tags: ["ops", "{{d}}"],
  dependencyTargets: grains.map(grain => ({ name: ´{{stem}}_${grain.name}´ }))
}).queries(ctx => grains.map(grain => ´
INSERT INTO \´${dataform.projectConfig.defaultDatabase}.ops.refresh_log\´ (table_name, row_count, refreshed_at)
SELECT "{{stem}}_${grain.name}", COUNT(*), CURRENT_TIMESTAMP()
FROM ${ctx.resolve(´{{stem}}_${grain.name}´)}´));
`, "base", base.name, "list", list.String(), "stem", stem, "d", d.name, "key", base.key, "op", op))
}

func (d *domain) taken(stem string, k int) bool {
	for _, gr := range grains[:k] {
		if d.g.used[stem+"_"+gr.name] || d.g.used[stem+"_"+gr.name+"_not_empty"] {
			return true
		}
	}
	return false
}

// jsView is one view defined with publish(...).query(...).
func (d *domain) jsView() {
	src := d.pick(d.marts, d.chainEnds, d.stagingBase)
	a := &action{name: d.g.unique("v_" + d.name + "_" + src.entity + "_latest"), key: src.key, cols: src.cols, entity: src.entity}
	d.g.counts.Views++
	d.fileCounter++
	d.g.file(d.path("js", a.name, "js"), render(`// Latest rows of {{src}}, for ad-hoc analysis.
publish("{{name}}", {
  type: "view",
  schema: "{{d}}_reporting",
  description: "Rows of {{src}} changed recently.",
  tags: ["{{d}}", "adhoc"]
}).query(ctx => ´
SELECT *
FROM ${ctx.ref("{{src}}")}
WHERE ${sql_helpers.recentRows("updated_at")}´);
`, "src", src.name, "name", a.name, "d", d.name))
}

// ---- JiT -------------------------------------------------------------------

func (d *domain) jitPhase(n int) {
	for range n {
		src := d.pick(d.marts, d.chainEnds, d.stagingBase)
		switch d.jitCounter % 5 {
		case 0:
			d.jitTable(src)
		case 1:
			d.jitIncremental(src)
		case 2:
			d.jitAssertion(src)
		case 3:
			d.jitOperation(src)
		default:
			d.jitView(src)
		}
		d.jitCounter++
		d.g.counts.JiT++
	}
}

// JiT function bodies avoid `catch (e)`: the official CLI's vm2 sandbox
// rewrites such clauses in the jitCode text it prints, so dfd's output could
// not be byte-compared with it. `catch {` is left alone.

func (d *domain) jitTable(src *action) {
	name := d.g.unique("jit_" + d.name + "_" + src.entity + "_profile")
	d.g.counts.Tables++
	d.g.file(d.path("jit", name, "js"), render(`// The column list is read from the live table at run time.
publish("{{name}}", {
  type: "table",
  schema: "{{d}}_marts",
  description: "Profile of {{src}} with the columns it has at run time.",
  dependencies: ["{{src}}"],
  tags: ["jit", "{{d}}"]
}).jitCode(async (jctx) => {
  let columns = ["{{key}}"];
  try {
    const meta = await jctx.adapter.getTable({
      target: { database: jctx.database(), schema: "{{d}}_marts", name: "{{src}}" }
    });
    columns = (meta.fields || []).map(f => f.name).filter(c => !c.startsWith("_"));
  } catch {
    // Not reachable when compiled outside a run: keep the key only.
  }
  return {
    query: ´SELECT ${columns.join(", ")}, CURRENT_TIMESTAMP() AS profiled_at FROM ${jctx.ref("{{src}}")}´,
    preOps: [´-- building ${jctx.self()} (lookback ${jctx.data.lookback_days} days)´]
  };
});
`, "name", name, "d", d.name, "src", src.name, "key", src.key))
}

func (d *domain) jitIncremental(src *action) {
	name := d.g.unique("jit_" + d.name + "_" + src.entity + "_shards")
	d.g.counts.Incrementals++
	d.g.file(d.path("jit", name, "js"), render(`// Reads every daily shard of the source that exists at run time.
publish("{{name}}", {
  type: "incremental",
  schema: "{{d}}_marts",
  uniqueKey: ["{{key}}"],
  bigquery: { partitionBy: "DATE(updated_at)" },
  dependencies: ["{{src}}"],
  tags: ["jit", "{{d}}", "hourly"]
}).jitCode(async (jctx) => {
  const listing = await jctx.adapter.listTables({ database: jctx.database(), schema: jctx.schema() });
  const shards = (listing.tables || [])
    .map(t => t.target.name)
    .filter(n => n.startsWith("{{src}}_"));
  const filter = jctx.when(
    jctx.incremental(),
    ´WHERE updated_at > (SELECT MAX(updated_at) FROM ${jctx.self()})´,
    ´WHERE DATE(updated_at) >= DATE_SUB(CURRENT_DATE(), INTERVAL ${jctx.data.retention.days} DAY)´
  );
  return ´SELECT *, ${shards.length} AS shard_count FROM ${jctx.ref("{{src}}")} ${filter}´;
});
`, "name", name, "d", d.name, "src", src.name, "key", src.key))
}

func (d *domain) jitAssertion(src *action) {
	name := d.g.unique("jit_assert_" + d.name + "_" + src.entity + "_volume")
	d.g.counts.Assertions++
	d.g.file(d.path("jit", name, "js"), render(`// The threshold comes from the table's current size, read at run time.
assert("{{name}}", {
  description: "Fails when {{src}} shrinks by more than 10%.",
  dependencyTargets: [{ name: "{{src}}" }],
  tags: ["jit", "quality", "{{d}}"]
}).jitCode(async (jctx) => {
  const res = await jctx.adapter.execute({
    statement: ´SELECT COUNT(*) AS n FROM ${jctx.ref("{{src}}")}´,
    fetchResults: true,
    rowLimit: 1
  });
  const cell = res.rows && res.rows.length ? res.rows[0].fields.n : null;
  const expected = cell ? Number(cell.stringValue || cell.numberValue || 0) : 0;
  return {
    query: ´SELECT 1 AS too_few FROM ${jctx.ref("{{src}}")} HAVING COUNT(*) < ${Math.floor(expected * 0.9)}´
  };
});
`, "name", name, "d", d.name, "src", src.name))
}

func (d *domain) jitOperation(src *action) {
	name := d.g.unique("jit_op_" + d.name + "_" + src.entity + "_cleanup")
	d.g.counts.Operations++
	d.g.file(d.path("jit", name, "js"), render(`// Drops scratch copies of {{src}} that the warehouse still has.
operate("{{name}}", {
  description: "Deletes scratch tables left by backfills of {{src}}.",
  dependencyTargets: [{ name: "{{src}}" }],
  tags: ["jit", "maintenance", "{{d}}"]
}).jitCode(async (jctx) => {
  const listing = await jctx.adapter.listTables({ database: jctx.database(), schema: jctx.schema() });
  const scratch = (listing.tables || []).filter(t => t.target.name.startsWith("scratch_{{src}}"));
  const statements = scratch.map(t => ´DROP TABLE IF EXISTS \´${t.target.database}.${t.target.schema}.${t.target.name}\´´);
  statements.push(´-- checked ${jctx.ref("{{src}}")}; dropped ${scratch.length}´);
  return statements;
});
`, "name", name, "d", d.name, "src", src.name))
}

func (d *domain) jitView(src *action) {
	name := d.g.unique("jit_" + d.name + "_" + src.entity + "_current")
	d.g.counts.Views++
	d.g.file(d.path("jit", name, "js"), render(`// A view whose filter depends on the environment it runs in.
publish("{{name}}", {
  type: "view",
  schema: "{{d}}_reporting",
  dependencies: ["{{src}}"],
  tags: ["jit", "{{d}}"]
}).jitCode(async (jctx) => ´SELECT * FROM ${jctx.ref("{{src}}")} WHERE ${jctx.data.retention.environment === "prod" ? "TRUE" : "FALSE"}´);
`, "name", name, "d", d.name, "src", src.name))
}

// ---- manual assertions and operations -----------------------------------

func (d *domain) assertionsPhase(n int) {
	for i := range n {
		src := d.pick(d.marts, d.chainEnds, d.stagingBase)
		kind := []string{"orphans", "fresh", "keys_unique", "amounts_valid"}[i%4]
		if kind == "amounts_valid" && !slices.Contains(src.cols, "amount") {
			kind = "keys_unique"
		}
		if kind == "orphans" && src.key == d.hubKey {
			kind = "fresh"
		}
		name := d.g.unique(fmt.Sprintf("assert_%s_%s_%s", d.name, src.entity, kind))
		d.g.counts.Assertions++
		schema := ""
		if d.g.chance(0.3) {
			schema = fmt.Sprintf("\n  schema: %q,", d.name+"_quality")
		}
		var body string
		switch kind {
		case "orphans":
			body = fmt.Sprintf("SELECT s.%s\nFROM ${ref(%q)} AS s\nLEFT JOIN ${ref(%q)} AS h ON h.%s = s.%s\nWHERE h.%s IS NULL\n",
				src.key, src.name, d.hub.name, d.hubKey, d.hubKey, d.hubKey)
		case "fresh":
			body = fmt.Sprintf("SELECT MAX(updated_at) AS last_update\nFROM ${ref(%q)}\nHAVING MAX(updated_at) < TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 26 HOUR)\n", src.name)
		case "keys_unique":
			body = fmt.Sprintf("SELECT %s, COUNT(*) AS copies\nFROM ${ref(%q)}\nGROUP BY %s\nHAVING COUNT(*) > 1\n", src.key, src.name, src.key)
		default:
			body = fmt.Sprintf("SELECT %s, amount\nFROM ${ref(%q)}\nWHERE amount < 0 OR amount > ${%s.RETENTION_DAYS} * 1000000\n", src.key, src.name, d.name)
		}
		d.g.file(d.path("assertions", name, "sqlx"), fmt.Sprintf(`config {
  type: "assertion",%s
  description: "%s: %s.",
  tags: ["quality", %q]
}

%s`, schema, src.name, strings.ReplaceAll(kind, "_", " "), d.name, body))
	}
}

func (d *domain) operationsPhase(n int) {
	for i := range n {
		kind := []string{"grant", "snapshot", "retention"}[i%3]
		src := d.pick(d.marts, d.chainEnds, d.stagingBase)
		if kind == "retention" {
			if t := d.pick(d.tablesOnly); t != nil {
				src = t
			} else {
				kind = "grant"
			}
		}
		name := d.g.unique(fmt.Sprintf("op_%s_%s_%s", d.name, src.entity, kind))
		d.g.counts.Operations++
		var text string
		switch kind {
		case "grant":
			text = fmt.Sprintf(`config {
  type: "operations",
  description: "Gives BI readers access to %[1]s.",
  dependencies: [%[1]q],
  tags: ["ops", %[2]q]
}

GRANT `+"`roles/bigquery.dataViewer`"+`
ON TABLE ${resolve(%[1]q)}
TO "${constants.BI_READER}";
---
GRANT `+"`roles/bigquery.metadataViewer`"+`
ON SCHEMA `+"`${dataform.projectConfig.defaultDatabase}.%[2]s_marts`"+`
TO "${constants.BI_READER}"
`, src.name, d.name)
		case "snapshot":
			text = fmt.Sprintf(`config {
  type: "operations",
  hasOutput: true,
  schema: "%[2]s_snapshots",
  description: "Daily snapshot of %[1]s, written by hand-written DDL.",
  tags: ["ops", %[2]q, "daily"]
}

CREATE OR REPLACE TABLE ${self()}
PARTITION BY snapshot_date AS
SELECT CURRENT_DATE() AS snapshot_date, *
FROM ${ref(%[1]q)}
`, src.name, d.name)
		default:
			text = fmt.Sprintf(`config {
  type: "operations",
  description: "Deletes rows of %[1]s older than the retention period.",
  tags: ["ops", %[2]q, "maintenance"]
}

DELETE FROM ${ref(%[1]q)}
WHERE created_at < TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL ${%[2]s.RETENTION_DAYS} DAY)
`, src.name, d.name)
		}
		d.g.file(d.path("operations", name, "sqlx"), text)
	}
}

// overview reads every mart and rollup of the domain: one action
// referencing many.
func (d *domain) overview() {
	name := d.g.unique(d.name + "_overview")
	d.g.counts.Tables++
	reads := append(slices.Clone(d.marts), d.rollups...)
	if len(reads) == 0 {
		reads = append(slices.Clone(d.chainEnds), d.stagingBase...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `config {
  type: "table",
  schema: "%s_reporting",
  description: "Row counts of every %s mart and rollup.",
  tags: ["reporting", %q, "daily"]
}

`, d.name, d.name, d.name)
	for i, r := range reads {
		if i > 0 {
			b.WriteString("UNION ALL\n")
		}
		fmt.Fprintf(&b, "SELECT %q AS table_name, COUNT(*) AS row_count FROM ${ref(%q)}\n", r.name, r.name)
	}
	d.g.file(d.path("reporting", name, "sqlx"), b.String())
	d.g.overviews = append(d.g.overviews, &action{name: name})
}

func (d *domain) maybe(p float64, s string) string {
	if d.g.chance(p) {
		return s
	}
	return ""
}

// render replaces {{key}} with values (pairs in kv) and "´" with a backtick.
func render(tmpl string, kv ...string) string {
	pairs := make([]string, 0, len(kv))
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, "{{"+kv[i]+"}}", kv[i+1])
	}
	return js(strings.NewReplacer(pairs...).Replace(tmpl))
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
