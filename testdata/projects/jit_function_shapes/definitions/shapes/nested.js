// Arrow functions taken from an object and an array, with arrow functions
// inside them and parentheses nested around their bodies.
const builders = {
  rollup: async (jctx) => ((columns) => ({
    query: `SELECT ${columns.join(", ")}, COUNT(*) AS clicks FROM ${jctx.ref("raw_clicks")} GROUP BY ${columns.map((c, i) => (i + 1)).join(", ")}`
  }))(["country", "campaign_id"])
};
const steps = [
  async (jctx) => (((await jctx.adapter.execute({
    statement: `SELECT COUNT(*) AS n FROM ${jctx.ref("raw_clicks")}`,
    fetchResults: true,
    rowLimit: 1
  })).rows.length) ? `SELECT * FROM ${jctx.ref("raw_clicks")}` : `SELECT 1`)
];

publish("country_rollup", { type: "table", dependencies: ["raw_clicks"] }).jitCode(builders.rollup);
publish("recent_clicks", { type: "table", dependencies: ["raw_clicks"] }).jitCode(steps[0]);
