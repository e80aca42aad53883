const FIRST_RESPONSE_HOURS = { urgent: 1, high: 4, normal: 24, low: 72 };

function slaHoursCase(priorityColumn) {
  return "CASE " + priorityColumn + " " +
    Object.entries(FIRST_RESPONSE_HOURS).map(([p, h]) => `WHEN '${p}' THEN ${h}`).join(" ") +
    " END";
}

module.exports = { FIRST_RESPONSE_HOURS, slaHoursCase };
