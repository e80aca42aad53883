// Tokenizes SQLX with our TextMate grammar (vscode-textmate, the engine VS
// Code uses). source.js and source.sql are small stand-ins here: this checks
// our grammar's structure (where blocks begin and end, what is embedded as
// what), not the JavaScript or SQL grammars, which VS Code brings.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { before, describe, it } from "node:test";
import * as oniguruma from "vscode-oniguruma";
import * as vsctm from "vscode-textmate";

const ROOT = path.resolve(__dirname, "..", "..", "..");

const STUB_JS = {
  scopeName: "source.js",
  patterns: [{ include: "#expression" }],
  repository: {
    comment: { patterns: [{ name: "comment.line.double-slash.js", match: "//.*$" }] },
    expression: {
      patterns: [
        { include: "#comment" },
        { name: "string.quoted.double.js", match: '"[^"]*"' },
        { name: "string.template.js", begin: "`", end: "`" },
        { name: "keyword.control.js", match: "\\b(const|return|if)\\b" },
        { name: "meta.objectliteral.js", begin: "\\{", end: "\\}", patterns: [{ include: "#expression" }] },
        { name: "entity.name.function.js", match: "\\b[a-z_]\\w*(?=\\()" },
      ],
    },
  },
};
const STUB_SQL = {
  scopeName: "source.sql",
  patterns: [{ name: "keyword.other.sql", match: "(?i)\\b(select|from|where|group|by|delete|insert|into)\\b" }],
};

let grammar: vsctm.IGrammar;

before(async () => {
  const wasm = fs.readFileSync(path.join(ROOT, "node_modules", "vscode-oniguruma", "release", "onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s: string[]) => new oniguruma.OnigScanner(s),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope: string) => {
      if (scope === "source.sqlx") {
        const p = path.join(ROOT, "syntaxes", "sqlx.tmLanguage.json");
        return vsctm.parseRawGrammar(fs.readFileSync(p, "utf8"), p);
      }
      if (scope === "source.js") return vsctm.parseRawGrammar(JSON.stringify(STUB_JS), "js.json");
      if (scope === "source.sql") return vsctm.parseRawGrammar(JSON.stringify(STUB_SQL), "sql.json");
      return null;
    },
  });
  const g = await registry.loadGrammar("source.sqlx");
  assert.ok(g);
  grammar = g;
});

/** [text, scopes] of every token of `src`. */
function tokens(src: string): { text: string; scopes: string[] }[] {
  const out: { text: string; scopes: string[] }[] = [];
  let stack = vsctm.INITIAL;
  for (const line of src.split("\n")) {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) out.push({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    stack = r.ruleStack;
  }
  return out;
}

function scopesOf(src: string, text: string, nth = 0): string[] {
  const found = tokens(src).filter((t) => t.text === text);
  assert.ok(found.length > nth, `no token ${JSON.stringify(text)} in ${JSON.stringify(tokens(src).map((t) => t.text))}`);
  return found[nth].scopes;
}

const has = (scopes: string[], s: string) => scopes.some((x) => x === s || x.startsWith(s + " ") || x.split(" ").includes(s));

const SAMPLE = `-- a comment
config {
  type: "incremental",
  bigquery: {
    partitionBy: "DATE(ts)"
  },
  tags: ["daily"]
}

js {
  const cutoff = () => { return "x"; };
}

pre_operations {
  DELETE FROM \${self()} WHERE true
}

/* block comment */
SELECT a FROM \${ref("src")} WHERE s = 'id-\${when(incremental(), "x")}'
`;

describe("SQLX grammar", () => {
  it("highlights the config block as a JavaScript object and ends it at its own brace", () => {
    assert.ok(has(scopesOf(SAMPLE, "config"), "keyword.other.block.config.sqlx"));
    const type = scopesOf(SAMPLE, "type");
    assert.ok(has(type, "meta.embedded.block.javascript"), type.join(","));
    assert.ok(has(type, "support.type.property-name.sqlx"));
    const nested = scopesOf(SAMPLE, "partitionBy");
    assert.ok(has(nested, "meta.block.config.sqlx") && has(nested, "support.type.property-name.sqlx"), nested.join(","));
    assert.ok(has(scopesOf(SAMPLE, '"incremental"'), "string.quoted.double.js"));
    // After the config block the SQL body and other blocks are not inside it.
    assert.ok(!has(scopesOf(SAMPLE, "js"), "meta.block.config.sqlx"));
    assert.ok(!has(scopesOf(SAMPLE, "SELECT"), "meta.block.config.sqlx"));
    assert.ok(!has(scopesOf(SAMPLE, "SELECT"), "meta.block.js.sqlx"));
  });

  it("embeds JavaScript in js { } blocks, nested braces included", () => {
    assert.ok(has(scopesOf(SAMPLE, "js"), "keyword.other.block.js.sqlx"));
    const c = scopesOf(SAMPLE, "const");
    assert.ok(has(c, "meta.embedded.block.javascript") && has(c, "keyword.control.js"), c.join(","));
    assert.ok(has(scopesOf(SAMPLE, "return"), "meta.block.js.sqlx"));
    assert.ok(!has(scopesOf(SAMPLE, "pre_operations"), "meta.block.js.sqlx"));
  });

  it("embeds SQL in pre_operations with interpolations", () => {
    assert.ok(has(scopesOf(SAMPLE, "pre_operations"), "keyword.other.block.sqlx"));
    const del = scopesOf(SAMPLE, "DELETE");
    assert.ok(has(del, "meta.embedded.block.sql") && has(del, "keyword.other.sql"), del.join(","));
    assert.ok(has(scopesOf(SAMPLE, "self"), "meta.template.expression.sqlx"));
  });

  it("embeds SQL in the body, ${…} as JavaScript, also inside SQL strings", () => {
    assert.ok(has(scopesOf(SAMPLE, "SELECT"), "keyword.other.sql"));
    assert.ok(!has(scopesOf(SAMPLE, "SELECT"), "meta.block.sql.sqlx"));
    const ref = scopesOf(SAMPLE, "ref");
    assert.ok(has(ref, "meta.template.expression.sqlx") && has(ref, "meta.embedded.line.javascript") && has(ref, "entity.name.function.js"), ref.join(","));
    assert.ok(has(scopesOf(SAMPLE, "${", 0), "punctuation.definition.template-expression.begin.sqlx"));
    const when = scopesOf(SAMPLE, "when");
    assert.ok(has(when, "string.quoted.single.sql") && has(when, "meta.template.expression.sqlx"), when.join(","));
  });

  it("recognises -- and /* */ comments", () => {
    assert.ok(has(scopesOf(SAMPLE, " a comment"), "comment.line.double-dash.sqlx"));
    assert.ok(has(scopesOf(SAMPLE, " block comment "), "comment.block.sqlx"));
  });
});
