-- order_lines loses its index on sku (see the MySQL file of the same
-- version for why).
DROP INDEX IF EXISTS idx_order_lines_sku;
