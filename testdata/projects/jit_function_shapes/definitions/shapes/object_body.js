// An arrow function whose body is a parenthesised object: the usual way to
// return { query, preOps, postOps } from JiT code without a block.
publish("clicks_by_country", {
  type: "table",
  dependencies: ["raw_clicks"]
}).jitCode(async (jctx) => ({
  query: `SELECT country, COUNT(*) AS clicks FROM ${jctx.ref("raw_clicks")} GROUP BY country`,
  preOps: [`-- building ${jctx.self()}`],
  postOps: []
}));
