-- Percents in basis points (see the MySQL file of the same version).
ALTER TABLE templates ADD COLUMN percent_off_bp BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN get_percent_bp BIGINT NOT NULL DEFAULT 0;
UPDATE templates SET percent_off_bp = percent_off * 100 WHERE percent_off <> 0;
UPDATE templates SET get_percent_bp = get_percent * 100 WHERE get_percent <> 0;
