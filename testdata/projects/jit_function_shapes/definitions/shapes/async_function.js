// An async function expression (not an arrow), with template literals
// nested in template literals.
publish("visits", {
  type: "incremental",
  uniqueKey: ["visitor_id", "visit_date"],
  dependencies: ["raw_clicks"]
}).jitCode(async function (jctx) {
  const meta = await jctx.adapter.getTable({
    target: { database: "acme-collector", schema: "landing", name: "raw_clicks" }
  });
  const columns = (meta.fields || []).map((f) => f.name).filter((n) => n !== "tags");
  return `SELECT ${columns.map((c) => `r.${c}`).join(", ")}, DATE(r.clicked_at) AS visit_date
FROM ${jctx.ref("raw_clicks")} AS r
${jctx.incremental() ? `WHERE DATE(r.clicked_at) > (SELECT MAX(visit_date) FROM ${jctx.self()})` : ""}`;
});

// A conditional whose branches are parenthesised objects.
publish("visits_by_campaign", {
  type: "incremental",
  dependencies: ["visits", "campaigns"]
}).jitCode(async (jctx) => jctx.incremental()
  ? ({ query: `SELECT * FROM ${jctx.ref("visits")} WHERE visit_date = CURRENT_DATE()` })
  : ({ query: `SELECT * FROM ${jctx.ref("visits")}` }));
