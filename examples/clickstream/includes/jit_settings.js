// Compile-time helpers. JiT functions are serialised with toString() and run later in a
// separate sandbox, so they cannot call these; values are handed over through jitData instead.
const LOOKBACK_DAYS = 3;
const COUNTRIES = ["US", "CA", "MX"];

module.exports = { LOOKBACK_DAYS, COUNTRIES };
