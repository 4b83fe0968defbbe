-- Returns by line (see the MySQL file of the same version).
ALTER TABLE order_returns ADD COLUMN return_lines TEXT NULL;
