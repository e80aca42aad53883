// ERROR (intended): customers has a country column, the GROUP BY misspells it.
publish("by_country", { type: "view" }).query(
  (ctx) => `
SELECT country, COUNT(*) AS customers
FROM ${ctx.ref("customers")}
GROUP BY	contry
`
);
