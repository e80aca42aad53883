import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { initializationOptions, needsRestart, serverArgs, serverSettings } from "../src/settings";

const getter = (values: Record<string, unknown>) => (key: string) => values[key];

describe("settings → initializationOptions", () => {
  it("nests the dfd.* keys the way the server reads them", () => {
    const opts = initializationOptions(
      getter({
        "metadata.source": "snapshot",
        "metadata.snapshot": "metadata.json",
        "bigquery.credentials": "~/.df-credentials.json",
        "bigquery.endpoint": "http://127.0.0.1:9050",
        "jit.timeoutMs": 5000,
        "preview.maxBytesBilled": 10737418240,
        "preview.updateWhileTyping": false,
        compileAsYouType: true,
        debounceMs: 150,
        logLevel: "info",
        path: "/usr/bin/dfd",
        "trace.server": "verbose",
      }),
    );
    assert.deepEqual(opts, {
      dfd: {
        metadata: { source: "snapshot", snapshot: "metadata.json" },
        bigquery: { credentials: "~/.df-credentials.json", endpoint: "http://127.0.0.1:9050" },
        jit: { timeoutMs: 5000 },
        preview: { maxBytesBilled: 10737418240 },
        compileAsYouType: true,
        debounceMs: 150,
        logLevel: "info",
      },
    });
  });

  it("sends only the server's settings, not the extension's own", () => {
    const opts = initializationOptions(getter({ "preview.updateWhileTyping": false, path: "/x", "trace.server": "off", debounceMs: 5 }));
    assert.deepEqual(opts, { dfd: { debounceMs: 5 } });
  });

  it("leaves out unset and empty values so the server keeps its defaults", () => {
    assert.deepEqual(serverSettings(getter({ "metadata.snapshot": "", "metadata.source": undefined, debounceMs: 0, "jit.timeoutMs": null, "preview.maxBytesBilled": NaN })), {
      debounceMs: 0,
    });
    assert.deepEqual(initializationOptions(getter({})), { dfd: {} });
  });

  it("starts the server with -v only at log level debug", () => {
    assert.deepEqual(serverArgs(getter({ logLevel: "info" })), ["serve"]);
    assert.deepEqual(serverArgs(getter({ logLevel: "debug" })), ["serve", "-v"]);
  });

  it("asks for a restart only when dfd.path changes", () => {
    assert.equal(needsRestart((s) => s === "dfd.path"), true);
    assert.equal(needsRestart((s) => s === "dfd.logLevel"), false);
    assert.equal(needsRestart((s) => s === "dfd.metadata.snapshot"), false);
  });
});
