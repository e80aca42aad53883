// Small SQL-generating helpers used from SQLX files.

function centsToAmount(column) {
  return `ROUND(SAFE_DIVIDE(${column}, 100), 2)`;
}

function inList(column, values) {
  return `${column} IN (${values.map(v => `'${v}'`).join(", ")})`;
}

function recentRows(column) {
  const days = Number(dataform.projectConfig.vars.lookback_days || "3");
  return `${column} >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL ${days} DAY)`;
}

module.exports = { centsToAmount, inList, recentRows };
