-- Unit selection (docs/pricing.md, "Unit selection"): a template may
-- discount at most so many units of each line or of the order, the
-- cheapest or the dearest first ('' without a bound).
ALTER TABLE templates
  ADD COLUMN max_units_per_line BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN max_units_per_order BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN unit_order VARCHAR(10) NOT NULL DEFAULT '';
