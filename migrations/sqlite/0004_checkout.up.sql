-- Online checkout: holds, stacking and partial returns (see the MySQL file
-- of the same version for why each table and index is there).

ALTER TABLE templates ADD COLUMN stacking VARCHAR(12) NOT NULL DEFAULT 'exclusive';

ALTER TABLE user_coupons ADD COLUMN hold_expires_at DATETIME NULL;
CREATE INDEX idx_user_coupons_hold ON user_coupons (status, hold_expires_at);

CREATE TABLE checkout_orders (
  order_id VARCHAR(64) NOT NULL PRIMARY KEY,
  stacking VARCHAR(12) NOT NULL,
  coupons BIGINT NOT NULL DEFAULT 0 CHECK (coupons >= 0),
  amount_cents BIGINT NOT NULL DEFAULT 0,
  returned_cents BIGINT NOT NULL DEFAULT 0,
  hold_state VARCHAR(10) NULL,
  hold_codes VARCHAR(200) NULL,
  hold_expires_at DATETIME NULL,
  discount_cents BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME NOT NULL,
  CHECK (returned_cents >= 0 AND returned_cents <= amount_cents)
);
CREATE INDEX idx_checkout_orders_hold ON checkout_orders (hold_state, hold_expires_at);

CREATE TABLE order_coupons (
  order_id VARCHAR(64) NOT NULL,
  coupon_id BIGINT NOT NULL,
  template_id BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  PRIMARY KEY (order_id, coupon_id)
);
CREATE UNIQUE INDEX uq_order_coupons_template ON order_coupons (order_id, template_id);
CREATE INDEX idx_order_coupons_coupon ON order_coupons (coupon_id);

CREATE TABLE order_returns (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  order_id VARCHAR(64) NOT NULL,
  return_id VARCHAR(64) NOT NULL,
  returned_amount_cents BIGINT NOT NULL,
  kept_amount_cents BIGINT NOT NULL,
  discount_kept_cents BIGINT NOT NULL,
  clawback_cents BIGINT NOT NULL,
  full_refund BOOLEAN NOT NULL DEFAULT FALSE,
  created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_order_returns_return ON order_returns (order_id, return_id);
