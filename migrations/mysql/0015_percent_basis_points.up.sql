-- Percents in basis points (docs/pricing.md, "Percents"): a percent
-- template's percent and a buy_x_get_y template's get percent in 0.01%
-- steps. Rows written before keep their whole percent and get its basis
-- points; a tier's percent_off_bp lives in the tiers JSON, and a tier
-- without one is read from its whole percent.
ALTER TABLE templates
  ADD COLUMN percent_off_bp BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN get_percent_bp BIGINT NOT NULL DEFAULT 0;
UPDATE templates SET percent_off_bp = percent_off * 100 WHERE percent_off <> 0;
UPDATE templates SET get_percent_bp = get_percent * 100 WHERE get_percent <> 0;
