SELECT s.warehouse_id
FROM `acme-logistics.inventory.stock_levels` AS s
LEFT JOIN `acme-erp.erp_export.warehouses` AS w USING (warehouse_id)
WHERE w.warehouse_id IS NULL
