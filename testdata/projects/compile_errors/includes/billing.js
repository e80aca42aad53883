const PLAN_PRICES = { basic: 9, pro: 29, enterprise: 99 };

function planPriceCase(column) {
  const branches = Object.entries(PLAN_PRICES).map(([plan, price]) => `WHEN '${plan}' THEN ${price}`);
  return `CASE ${column} ${branches.join(" ")} ELSE 0 END`;
}

module.exports = { PLAN_PRICES, planPriceCase };
