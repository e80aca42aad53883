// Comments and whitespace between the body and the closing parenthesis.
assert("campaign_names_present", {
  dependencyTargets: [{ name: "campaign_names" }]
}).jitCode(async (jctx) => (
  `SELECT 1 FROM ${jctx.ref("campaign_names")} HAVING COUNT(*) = 0` // no names: fail
  /* the assertion passes when this returns no rows */
));
