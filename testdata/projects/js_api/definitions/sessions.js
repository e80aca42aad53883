const timeoutMinutes = Number(dataform.projectConfig.vars.session_timeout_minutes);

publish("sessions", {
  type: "incremental",
  uniqueKey: ["session_id"],
  description: "User sessions stitched from page views.",
  bigquery: {
    partitionBy: "DATE(session_start)",
    clusterBy: ["user_id"],
    updatePartitionFilter: "session_start >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 2 DAY)",
    labels: { source: "firehose" }
  },
  tags: ["core", "hourly"]
})
  .preOps(ctx => ctx.when(ctx.incremental(),
    `DECLARE max_start TIMESTAMP DEFAULT (SELECT MAX(session_start) FROM ${ctx.self()})`))
  .query(ctx => `
WITH gaps AS (
  SELECT
    user_id,
    event_ts,
    IF(TIMESTAMP_DIFF(event_ts, LAG(event_ts) OVER (PARTITION BY user_id ORDER BY event_ts), MINUTE) > ${timeoutMinutes}
       OR LAG(event_ts) OVER (PARTITION BY user_id ORDER BY event_ts) IS NULL, 1, 0) AS is_new_session
  FROM ${ctx.ref("stg_page_view_events")}
  ${ctx.when(ctx.incremental(), "WHERE event_ts > max_start")}
), numbered AS (
  SELECT *, SUM(is_new_session) OVER (PARTITION BY user_id ORDER BY event_ts) AS session_number
  FROM gaps
)
SELECT
  FARM_FINGERPRINT(CONCAT(user_id, CAST(session_number AS STRING))) AS session_id,
  user_id,
  MIN(event_ts) AS session_start,
  MAX(event_ts) AS session_end,
  COUNT(*) AS page_views
FROM numbered
GROUP BY user_id, session_number`)
  .postOps(ctx => [
    `ALTER TABLE ${ctx.self()} SET OPTIONS (labels = [("env", "${dataform.projectConfig.vars.environment}")])`
  ]);
