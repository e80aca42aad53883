// Project-level data made available to every JiT function as jctx.data.
jitData("lookback_days", jit_settings.LOOKBACK_DAYS);
dataform.jitData("markets", {
  countries: jit_settings.COUNTRIES,
  retentionDays: Number(dataform.projectConfig.vars.retention_days),
  currency: "USD"
});
