import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { cliFor, runCommandLine, shellQuote } from "../src/runCli";

describe("run with the official CLI", () => {
  it("builds dataform run command lines", () => {
    assert.equal(
      runCommandLine({ cli: cliFor(false, "3.0.62"), actions: ["acme-shop.shop.daily_revenue"] }),
      "npx --yes @dataform/cli@3.0.62 run --actions acme-shop.shop.daily_revenue",
    );
    assert.equal(
      runCommandLine({ cli: cliFor(true, "3.0.62"), actions: ["p.d.t"], includeDeps: true }),
      "./node_modules/.bin/dataform run --actions p.d.t --include-deps",
    );
    assert.equal(runCommandLine({ cli: cliFor(false, undefined), tags: ["daily", "it's"] }), "npx --yes @dataform/cli run --tags daily --tags 'it'\\''s'");
  });
  it("quotes what a shell would read otherwise", () => {
    assert.equal(shellQuote("a b"), "'a b'");
    assert.equal(shellQuote("$(rm -rf /)"), "'$(rm -rf /)'");
    assert.equal(shellQuote("example.com:proj.d.t"), "example.com:proj.d.t");
  });
});
