// JiT assertion: the threshold is derived from last week's volume at run time.
assert("daily_clicks_volume", {
  description: "Fails when yesterday's clicks fall below 10% of the weekly average.",
  dependencyTargets: [{ name: "daily_clicks" }],
  tags: ["jit"]
}).jitCode(jit_rows.withRows(async (jctx) => {
  // jctx.rows: see includes/jit_rows.js.
  let threshold = 1; // no answer (a dry run has no rows): flag only a day without clicks
  try {
    const [row] = jctx.rows(await jctx.adapter.execute({
      statement: `SELECT AVG(clicks) AS avg_clicks FROM ${jctx.ref("daily_clicks")}`,
      fetchResults: true,
      rowLimit: 1
    }));
    if (row && row.avg_clicks !== null) {
      threshold = Math.floor(Number(row.avg_clicks) * 0.1);
    }
  } catch (e) {
    threshold = 1; // the query failed
  }
  return {
    query: `SELECT click_date, SUM(clicks) AS total_clicks
FROM ${jctx.ref("daily_clicks")}
WHERE click_date = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)
GROUP BY click_date
HAVING SUM(clicks) < ${threshold}`
  };
}));
