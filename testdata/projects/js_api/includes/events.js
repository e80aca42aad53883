// Event catalogue and helpers shared by the JS definitions.
const SOURCE_PROJECT = "pulse-collector";
const SOURCE_DATASET = "firehose";

// One staging table is generated per event type (see definitions/staging_events.js).
const EVENT_TYPES = [
  { name: "page_view", keyColumns: ["event_id"], extraColumns: ["page_path", "referrer"] },
  { name: "add_to_cart", keyColumns: ["event_id"], extraColumns: ["product_sku", "quantity"] },
  { name: "checkout", keyColumns: ["event_id"], extraColumns: ["order_id", "cart_value"] }
];

function stagingName(eventType) {
  return `stg_${eventType}_events`;
}

function sinceMinDate(column) {
  return `${column} >= DATE("${dataform.projectConfig.vars.min_event_date}")`;
}

module.exports = { SOURCE_PROJECT, SOURCE_DATASET, EVENT_TYPES, stagingName, sinceMinDate };
