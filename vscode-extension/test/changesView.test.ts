import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { changeItems, changesTitle, changeSummary, diffArgs, impactLine, DiffReport } from "../src/changesView";
import { fixture } from "./helpers";

// A real `dfd diff --format json` report: examples/clickstream with two
// AoT actions more (cmd/dfd/diff_test.go's fixture), where the working
// tree retypes clicked_at and renames visitor_id in clicks (read by the
// view visitors) and regroups top_countries.
const report = fixture<DiffReport>("diff-clickstream.json");

describe("changes vs main", () => {
  it("lists the changes under their categories, worst first", () => {
    const items = changeItems(report);
    assert.deepEqual(
      items.map((i) => [i.kind, i.label]),
      [
        ["separator", "Breaking (1)"],
        ["entry", "$(error) acme-clickstream.clicks.clicks"],
        ["separator", "Non-breaking (1)"],
        ["entry", "$(info) acme-clickstream.clicks.top_countries"],
      ],
    );
    const clicks = items[1];
    assert.equal(clicks.description, "table, modified");
    assert.equal(clicks.file, "definitions/clicks.sqlx");
    assert.equal(clicks.line, 3);
    assert.match(clicks.detail ?? "", /^clicked_at TIMESTAMP → DATE · visitor_id → visitor · description · SQL changed — read by acme-clickstream\.clicks\.visitors\.last_click \(errors\)/);
    assert.equal(items[3].detail, "SQL changed — its SQL changed in meaning");
  });

  it("titles the pick with both revisions and the counts", () => {
    assert.match(changesTitle(report), /^Changes: merge base with main \([0-9a-f]{7}\) → working tree: 1 breaking, 1 non-breaking, 0 metadata-only$/);
  });

  it("says each reader once", () => {
    const c = report.changes[0];
    assert.equal(impactLine({ ...c, impact: [...c.impact, ...c.impact] }), impactLine(c));
    assert.equal(impactLine({ ...c, impact: [] }), "");
    assert.equal(changeSummary({ ...c, columns: [], config: [], sql: "layout" }), "SQL layout only");
  });

  it("does not open a removed action's file", () => {
    const removed: DiffReport = { ...report, changes: [{ ...report.changes[1], status: "removed" }] };
    assert.equal(changeItems(removed)[1].file, undefined);
  });

  it("passes the server's metadata settings to dfd diff", () => {
    const get = (m: Record<string, unknown>) => (key: string) => m[key];
    assert.deepEqual(diffArgs("/p", get({})), ["diff", "--project", "/p", "--format", "json", "--offline"]);
    assert.deepEqual(diffArgs("/p", get({ "metadata.snapshot": "meta.json" })), ["diff", "--project", "/p", "--format", "json", "--metadata", "/p/meta.json"]);
    assert.deepEqual(diffArgs("/p", get({ "metadata.source": "snapshot", "metadata.snapshot": "/abs/m.json" })), ["diff", "--project", "/p", "--format", "json", "--metadata", "/abs/m.json"]);
    assert.deepEqual(diffArgs("/p", get({ "metadata.source": "bigquery", "bigquery.endpoint": "http://127.0.0.1:9050" })), ["diff", "--project", "/p", "--format", "json", "--endpoint", "http://127.0.0.1:9050"]);
    assert.deepEqual(diffArgs("/p", get({ "metadata.source": "bigquery" })), ["diff", "--project", "/p", "--format", "json"]);
  });
});
