// A single parameter without parentheses, and a parenthesised body; not an
// async function, so it returns a promise itself (core awaits the result
// with .then).
publish("campaign_names", {
  type: "view",
  dependencies: ["campaigns"]
}).jitCode(jctx => (Promise.resolve(`SELECT DISTINCT name FROM ${jctx.ref("campaigns")}`)));
