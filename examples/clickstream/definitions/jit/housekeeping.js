// JiT operation: inspects the dataset and drops stale scratch tables.
operate("drop_stale_scratch_tables", {
  description: "Deletes scratch_* tables that were not touched for a week.",
  dependencyTargets: [{ name: "click_sessions" }],
  tags: ["jit", "maintenance"]
}).jitCode(jit_rows.withRows(async (jctx) => {
  const listing = await jctx.adapter.listTables({ database: jctx.database(), schema: jctx.schema() });
  const weekAgo = Date.now() - 7 * 24 * 3600 * 1000;
  const stale = (listing.tables || []).filter(t =>
    t.target.name.startsWith("scratch_") && Number(t.lastUpdatedMillis) < weekAgo);
  const dropped = [];
  for (const table of stale) {
    try {
      await jctx.adapter.deleteTable({ target: table.target });
      dropped.push(table.target.name);
    } catch (e) {
      dropped.push(`${table.target.name} (failed: ${e.message})`);
    }
  }
  const result = await jctx.adapter.execute({
    statement: `SELECT COUNT(*) AS n FROM ${jctx.ref("click_sessions")}`,
    fetchResults: true,
    rowLimit: 1
  });
  // jctx.rows: see includes/jit_rows.js (no rows in a dry run).
  const [count] = jctx.rows(result);
  const sessions = count ? Number(count.n) : null;
  return [
    `-- dropped: ${dropped.join(", ") || "nothing"}; execution ${jctx.executionData.executionId || "n/a"}`,
    `INSERT INTO \`${jctx.database()}.${jctx.schema()}.housekeeping_log\` (ran_at, dropped, sessions)
     VALUES (CURRENT_TIMESTAMP(), ${dropped.length}, ${JSON.stringify(sessions)})`
  ];
}));

// The same kind of action with the JiT body given as a string of JavaScript.
operate("refresh_campaign_cache", {
  dependencyTargets: [{ name: "campaigns" }],
  hasOutput: true
}).jitCode(`async (jctx) => {
  let exists = true;
  try {
    await jctx.adapter.getTable({ target: { database: jctx.database(), schema: jctx.schema(), name: jctx.name() } });
  } catch (e) {
    exists = false;
  }
  const verb = exists ? "CREATE OR REPLACE TABLE " : "CREATE TABLE ";
  return { queries: [verb + jctx.self() + " AS SELECT * FROM " + jctx.ref("campaigns")] };
}`);
