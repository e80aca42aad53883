import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { escapeHtml, highlightSql, tokenizeSql } from "../src/sqlTokenizer";
import { textOf } from "./helpers";

const SAMPLE = `-- header comment
/* block
   comment */ SELECT DATE(r.clicked_at) AS d, 'it''s', "a\\"b", r'raw\\d', """triple
quoted""", 1.5e3, 0x1F, \`acme.clicks.raw\` # hash comment
FROM t WHERE x >= 10 AND y <> 'z' -- tail`;

describe("SQL tokenizer", () => {
  it("concatenates back to its input", () => {
    for (const s of [SAMPLE, "", "'unterminated", "/* open", "`open", "SELECT\n\t*\r\nFROM x;", "é ü 漢字 <>&"]) {
      assert.equal(tokenizeSql(s).map((t) => t.text).join(""), s);
      assert.equal(textOf(highlightSql(s)), s);
    }
  });

  it("classifies keywords, strings, numbers, comments, quoted names and functions", () => {
    const toks = tokenizeSql(SAMPLE).filter((t) => t.kind !== "text" && t.kind !== "operator");
    const find = (text: string) => toks.find((t) => t.text === text)?.kind;
    assert.equal(find("-- header comment"), "comment");
    assert.equal(find("/* block\n   comment */"), "comment");
    assert.equal(find("# hash comment"), "comment");
    assert.equal(find("SELECT"), "keyword");
    assert.equal(find("AS"), "keyword");
    assert.equal(find("DATE"), "keyword");
    assert.equal(find("'it''s'".slice(0, 4)), "string");
    assert.equal(find('"a\\"b"'), "string");
    assert.equal(find("r'raw\\d'"), "string");
    assert.equal(find('"""triple\nquoted"""'), "string");
    assert.equal(find("1.5e3"), "number");
    assert.equal(find("0x1F"), "number");
    assert.equal(find("`acme.clicks.raw`"), "quoted");
    assert.equal(find("-- tail"), "comment");
    assert.equal(tokenizeSql("COUNT(*)")[0].kind, "function");
    assert.equal(tokenizeSql("t.select")[2].kind, "text");
  });

  it("escapes HTML in every token", () => {
    const html = highlightSql("SELECT '<script>alert(1)</script>' AS x -- </pre><script>");
    assert.ok(!html.includes("<script"), html);
    assert.ok(html.includes("&lt;script&gt;"));
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});
