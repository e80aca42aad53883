// Compile-time settings. JiT functions are serialised with toString() and run later in a
// separate sandbox, so they cannot read these; values are handed over through jitData instead
// (and code through its text: see jit_rows.js).
const LOOKBACK_DAYS = 3;
const COUNTRIES = ["US", "CA", "MX"];

module.exports = { LOOKBACK_DAYS, COUNTRIES };
