package projectgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// BigSQLX returns a .sqlx file of about size bytes (never less) that
// defines one table: the shape of the generated mapping files and dumped
// lookup tables that real projects keep in one file. It has a config
// block, a js {} block, pre_operations, and a single SELECT whose body is
// a long CASE mapping repeated as needed, with everything core's SQLX
// lexer distinguishes: single-, double- and triple-quoted strings (with
// escapes), backticked identifiers, line and block comments, ${...}
// placeholders in SQL and inside strings, and JavaScript with strings,
// template literals and nested braces. It reads the table ref'd as
// source, and the file ends in the main SQL, so that an edit appending a
// comment line shows in the table's query.
//
// The text is a pure function of size, seed and source.
func BigSQLX(size int, seed int64, source string) string {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6269672d73716c78)) // "big-sqlx"
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString(js(fmt.Sprintf(`config {
  type: "table",
  schema: "reporting",
  description: "Product code mapping, generated from the catalogue export (about %d KB).",
  bigquery: { labels: { ...constants.LABELS, generated: "true" } },
  tags: ["reporting", "mapping"]
}

js {
  // Helpers of this file only.
  const SEGMENTS = { a: "retail", b: "wholesale", c: ´online {shop}´ };
  function segment(code) {
    return code in SEGMENTS ? ´'${SEGMENTS[code]}'´ : "'other'";
  }
}

pre_operations {
  DECLARE cutoff DATE DEFAULT DATE_SUB(CURRENT_DATE(), INTERVAL ${dataform.projectConfig.vars.lookback_days} DAY);
  -- a comment in pre_operations
  SET @@query_label = "mapping:${constants.REPORTING_CURRENCY}"
}

/* The CASE below is generated; do not edit by hand.
   Codes are upper case, labels are "as shipped". */
SELECT
  src.calendar_date,
  ${segment("a")} AS default_segment,
`, size/1000)))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett", "kilo", "lima"}
	word := func() string { return words[rng.IntN(len(words))] }
	block := 0
	for b.Len() < size-600 {
		block++
		fmt.Fprintf(&b, "  -- block %d\n  CASE UPPER(src.code_%d)\n", block, block%7)
		for i := 0; i < 40 && b.Len() < size-600; i++ {
			code := fmt.Sprintf("%c%05d", 'A'+rune(rng.IntN(26)), rng.IntN(100000))
			switch rng.IntN(10) {
			case 0:
				fmt.Fprintf(&b, "    WHEN '%s' THEN 'O\\'%s %s' -- escaped quote\n", code, title(word()), word())
			case 1:
				fmt.Fprintf(&b, "    WHEN \"%s\" THEN \"%s \\\"%s\\\"\"\n", code, word(), word())
			case 2:
				fmt.Fprintf(&b, "    WHEN '%s' THEN '''%s\n      %s (multi-line)'''\n", code, word(), word())
			case 3:
				fmt.Fprintf(&b, "    WHEN '%s' THEN CONCAT('%s-', '${constants.REPORTING_CURRENCY}') /* currency */\n", code, word())
			case 4:
				fmt.Fprintf(&b, "    WHEN '%s' THEN (SELECT label FROM `acme-raw-landing.lookup.%s_labels` WHERE id = %d)\n", code, word(), rng.IntN(1000))
			case 5:
				fmt.Fprintf(&b, "    WHEN '%s' THEN ${segment(\"%c\")}\n", code, 'a'+rune(rng.IntN(4)))
			case 6:
				fmt.Fprintf(&b, "    WHEN '%s' THEN \"\"\"%s \"quoted\" %s\"\"\"\n", code, word(), word())
			default:
				fmt.Fprintf(&b, "    WHEN '%s' THEN '%s %s'\n", code, title(word()), word())
			}
		}
		fmt.Fprintf(&b, "    ELSE NULL\n  END AS label_%d,\n", block)
	}
	fmt.Fprintf(&b, `  CURRENT_TIMESTAMP() AS mapped_at
FROM ${ref(%q)} AS src
WHERE src.calendar_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY)
`, source)
	for b.Len() < size {
		b.WriteString("-- padding\n")
	}
	return b.String()
}
