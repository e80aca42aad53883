-- SKUs that dropped below ten units in any warehouse.
SELECT warehouse_id, sku, on_hand
FROM `acme-logistics.inventory.stock_levels`
WHERE on_hand < 10
