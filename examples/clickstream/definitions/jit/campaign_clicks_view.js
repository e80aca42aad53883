// JiT view.
publish("campaign_clicks", {
  type: "view",
  dependencies: ["daily_clicks"]
}).jitCode(async (jctx) => `SELECT * FROM ${jctx.ref("daily_clicks")} WHERE campaign_name IS NOT NULL`);
