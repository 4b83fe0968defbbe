-- Full-price items only (see the MySQL file of the same version).
ALTER TABLE templates ADD COLUMN full_price_only BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE order_lines ADD COLUMN compare_at_price_cents BIGINT NOT NULL DEFAULT 0;
