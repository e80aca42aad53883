function fiscalYear(dateColumn) {
  const startMonth = Number(dataform.projectConfig.vars.fiscal_year_start_month);
  return `EXTRACT(YEAR FROM DATE_SUB(${dateColumn}, INTERVAL ${startMonth - 1} MONTH))`;
}

module.exports = { fiscalYear };
