-- Conditions on the cart (see the MySQL file of the same version).
ALTER TABLE templates ADD COLUMN cart_condition TEXT NULL;
