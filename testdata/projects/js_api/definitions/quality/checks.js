assert("checkout_has_cart", {
  description: "Every checkout follows at least one add_to_cart event of the same user.",
  tags: ["quality"]
}).query(ctx => `
SELECT c.event_id
FROM ${ctx.ref("stg_checkout_events")} AS c
LEFT JOIN ${ctx.ref("stg_add_to_cart_events")} AS a
  ON a.user_id = c.user_id AND a.event_ts <= c.event_ts
WHERE a.event_id IS NULL`);

assert("sessions_not_empty")
  .query(ctx => `SELECT 1 AS empty FROM ${ctx.ref("sessions")} HAVING COUNT(*) = 0`)
  .tags(["quality", "hourly"]);

// Row-count guard for every reporting table.
["daily_active_users", "conversion_funnel"].forEach(table => {
  assert(`${table}_has_rows`, ctx => `SELECT 1 AS missing FROM ${ctx.ref(table)} HAVING COUNT(*) = 0`);
});
