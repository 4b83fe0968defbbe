-- Full-price items only (docs/pricing.md, "Full-price items only"): a
-- template may skip the lines the shop marked down, and an order's line
-- keeps its compare-at price (0: none given) so that the stored cart is the
-- one priced.
ALTER TABLE templates ADD COLUMN full_price_only BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE order_lines ADD COLUMN compare_at_price_cents BIGINT NOT NULL DEFAULT 0;
