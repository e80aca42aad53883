// A small BigQuery SQL tokenizer for highlighting the preview's SQL. It
// never fails: anything it does not recognise is plain text, and the
// tokens always concatenate back to the input.

export type TokenKind = "keyword" | "string" | "number" | "comment" | "quoted" | "function" | "operator" | "text";

export interface Token {
  kind: TokenKind;
  text: string;
}

const KEYWORDS = new Set(
  (
    "all and any array as asc assert_rows_modified at begin between by call case cast cluster collate commit create cross " +
    "cube current current_date current_timestamp declare default delete desc distinct drop else elseif end enum escape except " +
    "exclude execute exists extract false fetch following for from full function grant group grouping groups hash having if " +
    "ignore immediate in inner insert interval into is join lateral left like limit loop materialized matched merge natural " +
    "new no not null nulls of on options or order outer over partition pivot preceding procedure proto qualify range " +
    "recursive repeat replace respect return returns revoke right rollback rollup rows safe_cast schema select set " +
    "some source struct table tablesample target temp temporary then to transaction true truncate unbounded union unnest " +
    "unpivot update using values view when where while window with within"
  ).split(" "),
);

const TYPES = new Set(
  "int64 float64 numeric bignumeric bool boolean string bytes date datetime time timestamp geography json int integer float".split(" "),
);

export function tokenizeSql(sql: string): Token[] {
  const out: Token[] = [];
  const push = (kind: TokenKind, text: string) => {
    const last = out[out.length - 1];
    if (last && last.kind === kind && (kind === "text" || kind === "operator")) {
      last.text += text;
    } else {
      out.push({ kind, text });
    }
  };
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    const rest2 = sql.slice(i, i + 2);
    // Comments: --, # and /* */.
    if (rest2 === "--" || c === "#") {
      let j = sql.indexOf("\n", i);
      if (j < 0) j = n;
      push("comment", sql.slice(i, j));
      i = j;
      continue;
    }
    if (rest2 === "/*") {
      let j = sql.indexOf("*/", i + 2);
      j = j < 0 ? n : j + 2;
      push("comment", sql.slice(i, j));
      i = j;
      continue;
    }
    // Strings, with optional r/b prefixes and triple quotes.
    const pre = /^(?:[rRbB]{1,2})?(?:'''|"""|'|")/.exec(sql.slice(i, i + 5));
    if (pre && (i === 0 || !/\w/.test(sql[i - 1]))) {
      const prefix = pre[0].replace(/['"]+$/, "");
      const quote = pre[0].slice(prefix.length);
      const raw = /r/i.test(prefix);
      let j = i + pre[0].length;
      while (j < n) {
        if (!raw && sql[j] === "\\") {
          j += 2;
          continue;
        }
        if (sql.startsWith(quote, j)) {
          j += quote.length;
          break;
        }
        if (quote.length === 1 && sql[j] === "\n") {
          break;
        }
        j++;
      }
      j = Math.min(j, n);
      push("string", sql.slice(i, j));
      i = j;
      continue;
    }
    if (c === "`") {
      let j = sql.indexOf("`", i + 1);
      j = j < 0 ? n : j + 1;
      push("quoted", sql.slice(i, j));
      i = j;
      continue;
    }
    const num = /^(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(sql.slice(i, i + 64));
    if (num && (i === 0 || !/[\w$]/.test(sql[i - 1]))) {
      push("number", num[0]);
      i += num[0].length;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i, i + 256));
    if (word) {
      const w = word[0];
      const lower = w.toLowerCase();
      let j = i + w.length;
      while (j < n && (sql[j] === " " || sql[j] === "\t")) j++;
      const prevDot = i > 0 && sql[i - 1] === ".";
      if (!prevDot && (KEYWORDS.has(lower) || TYPES.has(lower))) {
        push("keyword", w);
      } else if (sql[j] === "(") {
        push("function", w);
      } else {
        push("text", w);
      }
      i += w.length;
      continue;
    }
    if (/[=<>!+\-*/%|&^~,;.()[\]{}]/.test(c)) {
      push("operator", c);
      i++;
      continue;
    }
    push("text", c);
    i++;
  }
  return out;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}

const CLASS: Record<TokenKind, string> = {
  keyword: "k",
  string: "s",
  number: "n",
  comment: "c",
  quoted: "q",
  function: "f",
  operator: "o",
  text: "",
};

/** SQL → HTML with `<span class="k|s|n|c|q|f|o">` around tokens; everything escaped. */
export function highlightSql(sql: string): string {
  return tokenizeSql(sql)
    .map((t) => (CLASS[t.kind] ? `<span class="${CLASS[t.kind]}">${escapeHtml(t.text)}</span>` : escapeHtml(t.text)))
    .join("");
}
