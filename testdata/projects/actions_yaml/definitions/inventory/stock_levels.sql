SELECT
  CURRENT_DATE() AS snapshot_date,
  m.warehouse_id,
  m.sku,
  SUM(m.quantity) AS on_hand
FROM `acme-erp.erp_export.stock_movements` AS m
JOIN `acme-erp.erp_export.warehouses` AS w USING (warehouse_id)
WHERE w.is_active
GROUP BY 1, 2, 3
