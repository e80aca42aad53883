CREATE OR REPLACE TABLE `acme-logistics.inventory.reorder_points` AS
SELECT
  warehouse_id,
  sku,
  CEIL(AVG(picked) * 14) AS reorder_point
FROM `acme-logistics.inventory.daily_movements`
WHERE movement_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 90 DAY)
GROUP BY 1, 2;
