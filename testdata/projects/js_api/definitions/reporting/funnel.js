// Conversion funnel, built from the generated staging views.
const steps = events.EVENT_TYPES.map(e => e.name);

publish("conversion_funnel", {
  type: "table",
  partitionBy: "event_date",
  clusterBy: ["step"],
  tags: ["reporting"],
  dependencies: ["sessions"]
}).query(ctx => steps
  .map((step, i) => `SELECT DATE(event_ts) AS event_date, ${i + 1} AS step_index, "${step}" AS step,
  COUNT(DISTINCT user_id) AS users
FROM ${ctx.ref(events.stagingName(step))}
GROUP BY 1`)
  .join("\nUNION ALL\n"));
