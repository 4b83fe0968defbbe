-- Each action's part of an amount-only order's coupon (see the MySQL file
-- of the same version).
ALTER TABLE coupon_use_log ADD COLUMN actions TEXT NULL;
