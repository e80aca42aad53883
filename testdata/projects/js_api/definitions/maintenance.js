operate("refresh_user_plan_snapshot", ctx => [
  `CREATE OR REPLACE TABLE ${ctx.self()} AS SELECT user_id, plan, CURRENT_DATE() AS snapshot_date FROM ${ctx.ref("users")}`,
  `ALTER TABLE ${ctx.self()} SET OPTIONS (expiration_timestamp = TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 30 DAY))`
])
  .hasOutput(true)
  .description("Point-in-time copy of user plans.")
  .tags(["maintenance"]);

operate("purge_old_raw_events", {
  description: "Deletes firehose rows older than the retention window.",
  tags: ["maintenance"],
  dependencyTargets: [{ name: "sessions" }]
}).queries(ctx => events.EVENT_TYPES.map(e =>
  `DELETE FROM ${ctx.resolve(events.SOURCE_DATASET, `raw_${e.name}`)} WHERE DATE(event_ts) < DATE_SUB(CURRENT_DATE(), INTERVAL 400 DAY)`));
