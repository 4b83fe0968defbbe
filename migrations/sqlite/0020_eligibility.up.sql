-- Eligibility rules (see the MySQL file of the same version).
ALTER TABLE templates ADD COLUMN eligibility TEXT NOT NULL DEFAULT '';
