// JiT incremental table: compiled twice at run time (incremental and full-refresh variants).
publish("click_sessions", {
  type: "incremental",
  uniqueKey: ["session_id"],
  bigquery: { partitionBy: "session_date" },
  dependencies: ["daily_clicks", "raw_clicks"],
  tags: ["jit"]
}).jitCode(async (jctx) => {
  let runIds = [];
  try {
    runIds = jctx.executionData.runTargets.map(t => t.name);
  } catch {
    // No execution data (e.g. compiled outside a run).
  }
  const filter = jctx.when(
    jctx.incremental(),
    `WHERE DATE(clicked_at) > (SELECT MAX(session_date) FROM ${jctx.self()})`,
    `WHERE DATE(clicked_at) >= DATE_SUB(CURRENT_DATE(), INTERVAL ${jctx.data.markets.retentionDays} DAY)`
  );
  return `
SELECT
  FARM_FINGERPRINT(CONCAT(visitor_id, CAST(DATE(clicked_at) AS STRING))) AS session_id,
  DATE(clicked_at) AS session_date,
  visitor_id,
  COUNT(*) AS clicks,
  '${runIds.join(",")}' AS co_scheduled_actions
FROM ${jctx.resolve("raw_clicks")}
${filter}
GROUP BY 1, 2, 3`;
});
