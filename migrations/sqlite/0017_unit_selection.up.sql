-- Unit selection (see the MySQL file of the same version).
ALTER TABLE templates ADD COLUMN max_units_per_line BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN max_units_per_order BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN unit_order VARCHAR(10) NOT NULL DEFAULT '';
