SELECT
  supplier_id,
  APPROX_QUANTILES(DATE_DIFF(received_on, ordered_on, DAY), 100)[OFFSET(50)] AS median_lead_days,
  COUNT(*) AS purchase_orders
FROM `acme-erp.erp_export.purchase_orders`
WHERE received_on IS NOT NULL
GROUP BY supplier_id
