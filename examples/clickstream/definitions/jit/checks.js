// JiT assertion: the threshold is derived from last week's volume at run time.
assert("daily_clicks_volume", {
  description: "Fails when yesterday's clicks fall below 10% of the weekly average.",
  dependencyTargets: [{ name: "daily_clicks" }],
  tags: ["jit"]
}).jitCode(async (jctx) => {
  let threshold = 0;
  try {
    const res = await jctx.adapter.execute({
      statement: `SELECT AVG(clicks) AS avg_clicks FROM ${jctx.ref("daily_clicks")}`,
      fetchResults: true,
      rowLimit: 1
    });
    const avg = res.rows[0].fields.avg_clicks;
    threshold = Math.floor(Number(avg.stringValue || avg.numberValue || 0) * 0.1);
  } catch (e) {
    threshold = 1;
  }
  return {
    query: `SELECT click_date, SUM(clicks) AS clicks
FROM ${jctx.ref("daily_clicks")}
WHERE click_date = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)
GROUP BY click_date
HAVING SUM(clicks) < ${threshold}`
  };
});
