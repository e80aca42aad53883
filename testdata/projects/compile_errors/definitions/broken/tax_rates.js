// ERROR (intended): configuration check that throws while the file is loaded.
const supportedCountries = ["DE", "FR", "NL"];
const configuredCountries = ["DE", "FR", "NL", "XX"];

const unknown = configuredCountries.filter(c => !supportedCountries.includes(c));
if (unknown.length > 0) {
  throw new Error(`No VAT rate configured for: ${unknown.join(", ")}`);
}

publish("tax_rates", { type: "table" }).query("SELECT 'DE' AS country, 0.19 AS rate");
