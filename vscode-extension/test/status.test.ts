import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { folderName, projectFor, refreshSummary, STOPPED_VIEW, statusView, StatusResult } from "../src/status";
import { fixture, refreshed, statusResult } from "./helpers";

// status.json is a real dfd/status result (scripts/capture-fixtures.mjs):
// projects clickstream (9 actions), nocore (no @dataform/core) and warehouse.
const real = fixture<StatusResult>("status.json");

describe("status bar", () => {
  it("shows the project of the active file", () => {
    const v = statusView(real, "file:///workspace/clickstream/definitions/top_countries.sqlx");
    assert.equal(v.kind, "ok");
    assert.equal(v.text, "$(database) dfd: clickstream · core 3.0.62 · 9 actions · 2 workers · metadata snapshot");
    assert.equal(v.project, "file:///workspace/clickstream");
    assert.match(v.tooltip, /3 projects/);
    assert.match(v.tooltip, /warehouse/);
    assert.match(v.tooltip, /last compile \d+ ms \(version 1\)/);
    assert.match(v.tooltip, /^dfd dev — Dataform language server \(3 projects\)/);
    assert.match(v.tooltip, /workers: 2 \(2 ready, 0 busy\)/);
    assert.match(v.tooltip, /metadata: snapshot, offline — snapshot \/workspace\/clickstream\/metadata.json, 10 tables/);
  });

  it("shows the first project when the active file is in none", () => {
    assert.equal(statusView(real, undefined).text, "$(database) dfd: clickstream · core 3.0.62 · 9 actions · 2 workers · metadata snapshot");
    assert.equal(statusView(real, "file:///elsewhere/a.sqlx").project, "file:///workspace/clickstream");
    assert.equal(statusView(real, "file:///workspace/warehouse/x.sqlx").text, "$(database) dfd: warehouse · core 3.0.62 · 23 actions · 2 workers · metadata snapshot");
  });

  it("shows a project's error with the message in the tooltip", () => {
    const v = statusView(real, "file:///workspace/nocore/definitions/a.sqlx");
    assert.equal(v.kind, "error");
    assert.ok(v.text.startsWith("$(error) dfd: nocore · no usable @dataform/core"), v.text);
    assert.ok(v.text.length < 100);
    assert.match(v.tooltip, /Error: no usable @dataform\/core for project \/workspace\/nocore/);
    assert.match(v.tooltip, /npm install @dataform\/core/);
  });

  it("says when there is no Dataform project", () => {
    const v = statusView(statusResult({ projects: [], invariantViolations: 0 }));
    assert.equal(v.kind, "none");
    assert.equal(v.text, "$(database) dfd: no Dataform project");
    assert.equal(statusView(undefined).kind, "none");
  });

  it("renders workers and metadata when the server reports them", () => {
    const r: StatusResult = statusResult({
      projects: [
        {
          root: "file:///repo/my%20proj",
          version: 3,
          compiledVersion: 3,
          coreVersion: "3.0.62",
          actions: 1,
          workers: { ready: 1, busy: 1, total: 2 },
          metadata: { source: "bigquery", state: "offline", detail: "cannot reach bigquery.googleapis.com" },
        },
      ],
    });
    const v = statusView(r);
    assert.equal(v.text, "$(database) dfd: my proj · core 3.0.62 · 1 action · 2 workers · metadata offline");
    assert.match(v.tooltip, /workers: 2 \(1 ready, 1 busy\)/);
    assert.match(v.tooltip, /metadata: bigquery, offline — cannot reach bigquery.googleapis.com/);
    r.projects![0].metadata = { source: "none", state: "none" };
    assert.match(statusView(r).text, /· no metadata$/);
  });

  it("shows the server version, deferred edits and a metadata error", () => {
    const v = statusView(statusResult({
      serverVersion: "0.4.0",
      projects: [
        {
          root: "file:///r",
          version: 2,
          compiledVersion: 2,
          actions: 3,
          coreVersion: "3.0.62",
          deferredEdits: true,
          metadata: { source: "snapshot", state: "error", detail: "snapshot /r/m.json: no such file" },
        },
      ],
    }));
    assert.equal(v.text, "$(database) dfd: r · core 3.0.62 · 3 actions · metadata error");
    assert.match(v.tooltip, /^dfd 0\.4\.0 — Dataform language server/);
    assert.match(v.tooltip, /edits wait for a save/);
    assert.match(v.tooltip, /metadata: snapshot, error — snapshot \/r\/m.json: no such file/);
  });

  it("spins while a compile is pending", () => {
    const v = statusView(statusResult({ projects: [{ root: "file:///r", version: 5, compiledVersion: 4, actions: 2, coreVersion: "3.0.62" }] }));
    assert.equal(v.kind, "compiling");
    assert.equal(v.text, "$(sync~spin) dfd: r · core 3.0.62 · 2 actions");
    assert.match(v.tooltip, /compile pending/);
  });

  it("has a stopped view", () => {
    assert.equal(STOPPED_VIEW.text, "$(circle-slash) dfd: stopped");
  });

  it("finds the innermost project of a file", () => {
    const ps = [{ root: "file:///a" }, { root: "file:///a/b" }, { root: "file:///ab" }];
    assert.equal(projectFor(ps, "file:///a/b/c.sqlx")?.root, "file:///a/b");
    assert.equal(projectFor(ps, "file:///a/c.sqlx")?.root, "file:///a");
    assert.equal(projectFor(ps, "file:///abc.sqlx"), undefined);
    assert.equal(folderName("file:///x/y%20z/"), "y z");
  });

  it("summarises a metadata refresh", () => {
    assert.deepEqual(refreshSummary({ projects: [refreshed({ root: "file:///w/a", source: "snapshot", refreshed: 10 })] }), {
      message: "dfd: metadata refreshed — a: snapshot re-read (10 tables)",
      failed: false,
    });
    const bad = refreshSummary({
      projects: [
        { root: "file:///w/a", source: "bigquery", refreshed: 1 },
        refreshed({ root: "file:///w/b", source: "bigquery", error: "no credentials" }),
        { root: "file:///w/c", source: "none", refreshed: 0 },
      ],
    });
    assert.equal(bad.failed, true);
    assert.equal(
      bad.message,
      "dfd: refreshing metadata failed for some projects — a: 1 BigQuery listing fetched; b: no credentials; c: no metadata source (set dfd.metadata.snapshot or dfd.metadata.source)",
    );
    assert.match(refreshSummary({ projects: [] }).message, /no Dataform project/);
  });
  it("shows the cost of one run of the latest compile, and says when it is not available", () => {
    const cost = { available: true, version: 3, label: "≈ 15 GiB · $0.09 per run", billing: "on-demand", totalBytesProcessed: 1, incrementalTotalBytesProcessed: 1, actionsWithoutFigure: 0 };
    const now = statusView(statusResult({ projects: [{ root: "file:///w/p", version: 3, compiledVersion: 3, cost }] }), undefined);
    assert.match(now.text, /· ≈ 15 GiB · \$0\.09 per run$/);
    assert.match(now.tooltip, /cost of one run \(BigQuery dry runs\): ≈ 15 GiB · \$0\.09 per run/);
    const older = statusView(statusResult({ projects: [{ root: "file:///w/p", version: 4, compiledVersion: 4, cost }] }), undefined);
    assert.ok(!older.text.includes("GiB"), older.text);
    const none = statusView(statusResult({ projects: [{ root: "file:///w/p", cost: { ...cost, available: false, version: 1, label: "cost not available", reason: "the metadata source is snapshot" } }] }), undefined);
    assert.ok(!none.text.includes("cost"), none.text);
    assert.match(none.tooltip, /cost: not available — the metadata source is snapshot/);
  });
});
