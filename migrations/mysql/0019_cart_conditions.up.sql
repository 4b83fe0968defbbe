-- Conditions on the cart apart from the target (docs/pricing.md,
-- "Conditions"): what the cart must hold for a template's coupons to apply,
-- as JSON (a target's lists, min_quantity, min_amount_cents, repeat); NULL
-- for none. Named cart_condition: CONDITION is a reserved word in MySQL.
ALTER TABLE templates
  ADD COLUMN cart_condition TEXT NULL;
