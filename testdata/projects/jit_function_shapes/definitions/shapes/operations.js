// An operation whose body is a parenthesised array, and one whose JiT code
// is a string of JavaScript (not stringified by core: left as it is).
operate("archive_old_clicks", {
  dependencyTargets: [{ name: "visits" }]
}).jitCode(async (jctx) => ([
  `CREATE TABLE IF NOT EXISTS ${jctx.schema()}.visits_archive AS SELECT * FROM ${jctx.ref("visits")} WHERE FALSE`,
  `INSERT INTO ${jctx.schema()}.visits_archive SELECT * FROM ${jctx.ref("visits")} WHERE visit_date < DATE_SUB(CURRENT_DATE(), INTERVAL ${(30)} DAY)`
]));

operate("refresh_campaigns", {
  dependencyTargets: [{ name: "campaigns" }],
  hasOutput: true
}).jitCode("async (jctx) => ({ queries: [`CREATE OR REPLACE TABLE ${jctx.self()} AS SELECT * FROM ${jctx.ref(\"campaigns\")}`] })");
