-- Automatic offers and the campaign's per-customer cap (see the MySQL file
-- of the same version).
ALTER TABLE campaigns ADD COLUMN per_customer_limit BIGINT NOT NULL DEFAULT 0;
