import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { lineageItems, lineageTitle, noLineageMessage } from "../src/lineageView";
import type { LineageResult } from "../src/protocol_gen";
import { fixture } from "./helpers";

// Real dfd/lineage results on testdata/projects/sql_check (captured from
// the daemon's fake-editor session of daemon/lineage_test.go): every
// column of daily_revenue, and an assertion.
const all = fixture<LineageResult>("lineage-all.json");
const assertion = fixture<LineageResult>("lineage-assertion.json");

describe("column lineage", () => {
  it("lists each column's direct inputs and origins under its heading", () => {
    const items = lineageItems(all);
    const headings = items.filter((i) => i.kind === "separator").map((i) => i.label);
    assert.deepEqual(headings, ["order_date DATE", "revenue_cents INT64", "customers INT64"]);
    const revenue = items.slice(items.findIndex((i) => i.label === "revenue_cents INT64") + 1, items.findIndex((i) => i.label === "customers INT64"));
    assert.deepEqual(
      revenue.map((i) => [i.label, i.description, i.detail]),
      [
        ["$(arrow-small-left) acme-shop.shop.stg_orders.amount_cents", "direct · computed", "defined in definitions/staging/stg_orders.sqlx"],
        ["$(database) acme-raw.raw.orders.amount", "origin · computed", "defined in definitions/sources/orders.sqlx"],
      ],
    );
    assert.equal(revenue[0].input?.location?.uri, "file:///workspace/sql_check/definitions/staging/stg_orders.sqlx");
    assert.equal(lineageTitle(all), "Lineage of acme-shop.shop.daily_revenue");
    assert.equal(lineageTitle({ ...all, column: "revenue_cents" }), "Lineage of acme-shop.shop.daily_revenue.revenue_cents");
  });

  it("notes a column computed from none, and what could not be followed", () => {
    const r: LineageResult = {
      ...all,
      columns: [
        { name: "one", type: "INT64", direct: [], origins: [] },
        { name: "x", type: "STRING", direct: [{ table: "p.d.t", column: "x" }], origins: [{ table: "p.d.t", column: "x" }], unresolved: ["t is ambiguous"] },
      ],
    };
    const labels = lineageItems(r).map((i) => `${i.kind} ${i.label} ${i.detail ?? ""}`.trim());
    assert.deepEqual(labels, [
      "separator one INT64",
      "note $(symbol-constant) computed from no column",
      "separator x STRING",
      "entry $(arrow-small-left) p.d.t.x warehouse table",
      "entry $(database) p.d.t.x warehouse table",
      "note $(warning) not followed: t is ambiguous",
    ]);
  });

  it("says why an action has no lineage", () => {
    assert.equal(lineageItems(assertion).length, 0);
    assert.equal(
      noLineageMessage(assertion, "definitions/assertions/positive_amounts.sqlx"),
      "dfd: no column lineage of acme-shop.shop_assertions.positive_amounts: an assertion outputs no table: its rows are the failures it looks for",
    );
  });
});
