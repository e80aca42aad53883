// Shared constants for the shop warehouse.
const RAW_PROJECT = "acme-shop-raw";
const RAW_DATASET = "raw_shop";
const PAID_STATUSES = ["paid", "shipped", "delivered"];
const VAT_RATE = 0.21;
const REPORTING_LABELS = { team: "analytics", domain: "sales" };

module.exports = { RAW_PROJECT, RAW_DATASET, PAID_STATUSES, VAT_RATE, REPORTING_LABELS };
