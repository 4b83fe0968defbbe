-- Several actions per template (docs/pricing.md, "Several actions"): a
-- template's further actions, JSON (NULL: one action, its own kind
-- fields); and, on each coupon's discount of a line (or of the shipping),
-- each action's part of it, JSON [{"discount_cents":..,"units":[..]}] in
-- the template's order of actions (NULL: a coupon of one action, whose
-- part is the row's).
ALTER TABLE templates
  ADD COLUMN actions TEXT NULL;
ALTER TABLE order_line_discounts
  ADD COLUMN actions TEXT NULL;
