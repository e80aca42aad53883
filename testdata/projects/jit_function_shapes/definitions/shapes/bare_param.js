// A single parameter without parentheses, and a parenthesised template
// literal as the body.
publish("campaign_names", {
  type: "view",
  dependencies: ["campaigns"]
}).jitCode(jctx => (`SELECT DISTINCT name FROM ${jctx.ref("campaigns")}`));
