-- Automatic offers and the campaign's per-customer cap
-- (docs/automatic-offers.md): a template's code_mode may now be
-- 'automatic' (the column takes it as it is); a campaign caps the coupons
-- one customer holds of all its templates together (0: no cap).
ALTER TABLE campaigns ADD COLUMN per_customer_limit BIGINT NOT NULL DEFAULT 0;
