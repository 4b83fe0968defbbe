-- Several actions per template (see the MySQL file of the same version).
ALTER TABLE templates ADD COLUMN actions TEXT NULL;
ALTER TABLE order_line_discounts ADD COLUMN actions TEXT NULL;
