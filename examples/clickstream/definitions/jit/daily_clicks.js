// JiT table: the query is produced at run time, after looking at the warehouse.
publish("daily_clicks", {
  type: "table",
  description: "Clicks per day and country; columns depend on the live source schema.",
  dependencies: ["raw_clicks", "campaigns"],
  tags: ["jit"]
}).jitCode(async (jctx) => {
  const source = jctx.ref("raw_clicks");
  const markets = jctx.data.markets;
  let hasCampaignColumn = false;
  try {
    const meta = await jctx.adapter.getTable({
      target: { database: "acme-collector", schema: "landing", name: "raw_clicks" }
    });
    hasCampaignColumn = (meta.fields || []).some(f => f.name === "campaign_id");
  } catch (e) {
    // Source not reachable at compile time: fall back to the minimal column set.
    hasCampaignColumn = false;
  }
  const campaignSelect = hasCampaignColumn ? "c.name AS campaign_name," : "";
  const campaignJoin = hasCampaignColumn
    ? `LEFT JOIN ${jctx.ref("campaigns")} AS c USING (campaign_id)`
    : "";
  return {
    query: `
SELECT DATE(r.clicked_at) AS click_date, r.country, ${campaignSelect} COUNT(*) AS clicks
FROM ${source} AS r
${campaignJoin}
WHERE r.country IN (${markets.countries.map(c => `'${c}'`).join(", ")})
  AND DATE(r.clicked_at) >= DATE_SUB(CURRENT_DATE(), INTERVAL ${jctx.data.lookback_days} DAY)
GROUP BY 1, 2${hasCampaignColumn ? ", 3" : ""}`,
    preOps: [`-- building ${jctx.database()}.${jctx.schema()}.${jctx.name()}`],
    postOps: [`ALTER TABLE ${jctx.self()} SET OPTIONS (labels = [("currency", "${markets.currency.toLowerCase()}")])`]
  };
});
