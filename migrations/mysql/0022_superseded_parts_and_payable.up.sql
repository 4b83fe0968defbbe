-- A coupon refunded off an order and redeemed again on it (docs/returns.md,
-- "A refund"): its new rows keep, on the units returned before, the part
-- its earlier use took of them (paid, and settled by those returns);
-- carried_cents is that part of discount_cents (counted in
-- returned_discount_cents too), so that the coupon's own discount on the
-- line is discount_cents - carried_cents.
ALTER TABLE order_line_discounts
  ADD COLUMN carried_cents BIGINT NOT NULL DEFAULT 0;
-- What the order paid after every coupon on it when the redemption was
-- answered (docs/checkout.md, "Replays"): a replay answers it again. NULL
-- for the rows written before it was kept, and for confirms.
ALTER TABLE coupon_use_log
  ADD COLUMN payable_cents BIGINT NULL;
