import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { columnType, consoleTableUrl, formatBytes, renderRowsBody, rowsToCsv, rowsToJson } from "../src/rowsView";
import type { RowsResult } from "../src/protocol_gen";
import { fixture, textOf } from "./helpers";

// Real dfd/rows results (captured by daemon/rows_test.go with
// DFD_CAPTURE_ROWS): a view's query and a declared table's rows from the
// BigQuery emulator, a query above the confirmation threshold, a DELETE the
// policy refused, a view not built yet, a project without the BigQuery source.
const query = fixture<RowsResult>("rows-query.json");
const table = fixture<RowsResult>("rows-table.json");
const confirm = fixture<RowsResult>("rows-confirm.json");
const refused = fixture<RowsResult>("rows-refused.json");
const error = fixture<RowsResult>("rows-error.json");
const unavailable = fixture<RowsResult>("rows-unavailable.json");

function cells(html: string): string[][] {
  return [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .map((m) => [...m[1].matchAll(/<td class="([^"]*)">([\s\S]*?)<\/td>/g)].map((c) => `${c[1]}:${textOf(c[2])}`))
    .filter((r) => r.length > 0);
}

describe("data previews", () => {
  it("shows columns with their types, NULLs as NULL, nested values readable", () => {
    const html = renderRowsBody(query);
    const heads = [...html.matchAll(/<th data-type="([^"]*)"[^>]*><span class="name">([^<]*)<\/span>/g)].map((m) => `${m[2]} ${textOf(m[1])}`);
    assert.deepEqual(heads, ["id INTEGER", "buyer STRUCT<name STRING>", "tags ARRAY<STRING>", "amount NUMERIC", "placed TIMESTAMP", "paid BOOLEAN"]);
    assert.deepEqual(cells(html), [
      ["rownum:1", "number:1", 'nested:{"name":"Ann"}', 'nested:["x","y"]', "text:19.99", "text:2024-06-01 08:30:00 UTC", "bool:true"],
      ["rownum:2", "number:2", "null:NULL", "nested:[]", "null:NULL", "null:NULL", "null:NULL"],
    ]);
  });

  it("says what the query cost, with its job linked to BigQuery's console", () => {
    const head = textOf(renderRowsBody(query).split("</header>")[0]);
    assert.match(head, /^test\.shop\.buyers query · 2 rows · 38 B processed · 38 B billed job dfd-rows-[0-9a-f]+$/);
    assert.ok(renderRowsBody(query).includes(`data-url="${query.jobUrl!.replace(/&/g, "&amp;")}"`));
  });

  it("reads a table's rows for free", () => {
    const html = renderRowsBody(table);
    assert.match(textOf(html.split("</header>")[0]), /^test\.shop\.orders table rows · 1 of 2 · tabledata.list: no query, nothing billed$/);
    assert.ok(html.includes('data-action="source" data-source="query"'));
    assert.equal(cells(html).length, 1);
  });

  it("asks before a query above the threshold, refuses what the policy refuses, says why there is nothing", () => {
    const c = renderRowsBody(confirm);
    assert.match(textOf(c), /would process ≈ 1\.0 KiB, more than the 1000 B/);
    assert.ok(c.includes('data-action="confirm"'));
    assert.match(textOf(renderRowsBody(refused)), /Not run\. only read-only queries are previewed, and GoogleSQL reads this as a DELETE statement/);
    assert.match(textOf(renderRowsBody(error)), /BigQuery: NOT_FOUND: .*buyers/);
    assert.match(textOf(renderRowsBody(unavailable)), /set dfd\.metadata\.source to "bigquery"/);
    for (const r of [confirm, refused, error, unavailable]) {
      assert.ok(!renderRowsBody(r).includes('data-action="copy-csv"'), "no copy without rows");
    }
  });

  it("copies as CSV and JSON", () => {
    assert.equal(
      rowsToCsv(query),
      'id,buyer,tags,amount,placed,paid\r\n1,"{""name"":""Ann""}","[""x"",""y""]",19.99,2024-06-01 08:30:00 UTC,true\r\n2,,[],,,\r\n',
    );
    const back = JSON.parse(rowsToJson(query));
    assert.deepEqual(Object.keys(back[0]), ["id", "buyer", "tags", "amount", "placed", "paid"]);
    assert.deepEqual(back[1], { id: 2, buyer: null, tags: [], amount: null, placed: null, paid: null });
  });

  it("escapes what the server sends", () => {
    const r: RowsResult = { ...query, columns: [{ name: "<b>", type: "STRING" }], rows: [{ "<b>": "<script>alert(1)</script>" }] };
    const html = renderRowsBody(r);
    assert.ok(!html.includes("<script>"));
    assert.ok(html.includes("&lt;script&gt;"));
  });

  it("formats types, sizes and console links", () => {
    assert.equal(columnType({ name: "a", type: "RECORD", mode: "REPEATED", fields: [{ name: "b", type: "INTEGER", mode: "REPEATED" }] }), "ARRAY<STRUCT<b ARRAY<INTEGER>>>");
    assert.deepEqual([0, 1023, 1536, 1 << 30].map(formatBytes), ["0 B", "1023 B", "1.5 KiB", "1.0 GiB"]);
    assert.equal(consoleTableUrl("p", "d", "t"), "https://console.cloud.google.com/bigquery?p=p&d=d&t=t&page=table");
    assert.equal(consoleTableUrl(undefined, "d", "t"), "https://console.cloud.google.com/bigquery?d=d&t=t&page=table");
  });
});
