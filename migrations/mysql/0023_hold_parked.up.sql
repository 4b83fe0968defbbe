-- Whether the order's hold parked earlier rows of its coupons (a coupon
-- refunded off the order and held on it again: docs/checkout.md, "The
-- order state and the plan"): a release or an expiry puts them back only
-- then, and otherwise sends no UPDATE of order_line_discounts.
ALTER TABLE checkout_orders
  ADD COLUMN hold_parked BOOLEAN NOT NULL DEFAULT FALSE;
