-- Superseded parts and the first payable (see the MySQL file of the same
-- version).
ALTER TABLE order_line_discounts ADD COLUMN carried_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE coupon_use_log ADD COLUMN payable_cents BIGINT NULL;
