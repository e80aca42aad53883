SELECT
  DATE(booked_at) AS movement_date,
  warehouse_id,
  sku,
  SUM(IF(quantity > 0, quantity, 0)) AS received,
  SUM(IF(quantity < 0, -quantity, 0)) AS picked
FROM `acme-erp.erp_export.stock_movements`
WHERE DATE(booked_at) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)
GROUP BY 1, 2, 3
