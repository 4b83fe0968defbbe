-- Each action's part of an amount-only order's coupon (docs/pricing.md,
-- "Several actions"): a JSON list, in the template's order of actions, of
-- the discount each action took when the coupon was redeemed and what it
-- keeps after the order's returns by amount (docs/reports.md). NULL on the
-- rows of orders with lines (order_line_discounts.actions keeps theirs) and
-- on rows written before it was kept.
ALTER TABLE coupon_use_log
  ADD COLUMN actions TEXT NULL;
