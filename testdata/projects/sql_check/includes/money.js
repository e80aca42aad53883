// Amounts are NUMERIC in the source system; marts keep integer cents.
function cents(column) {
  return `CAST(ROUND(${column} * 100) AS INT64)`;
}

module.exports = { cents };
