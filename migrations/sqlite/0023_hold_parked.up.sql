-- Whether the order's hold parked earlier rows (see the MySQL file of the
-- same version).
ALTER TABLE checkout_orders ADD COLUMN hold_parked BOOLEAN NOT NULL DEFAULT FALSE;
