-- order_lines loses its index on sku (0012): no statement looks a line up
-- by its SKU (the discount report by SKU reaches the lines by their primary
-- key from order_line_discounts and groups them), and every hold of a cart
-- paid one index entry per line for it (BENCHMARKS.md, "Carts with lines").
ALTER TABLE order_lines DROP INDEX idx_order_lines_sku;
