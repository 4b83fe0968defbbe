-- Online checkout: holds, stacking and partial returns.
--
-- A held coupon is bound to its order until hold_expires_at.
-- checkout_orders has one row per order that carries coupons: its row is the
-- lock every hold and redemption on the order takes, and its guarded counter
-- (coupons, stacking) is how the database refuses two exclusive coupons, an
-- exclusive next to any other, or more than the cap: the UPDATE that adds a
-- coupon matches no row when the order has no room for it. order_coupons
-- lists the live coupons of an order; its unique index refuses a second
-- coupon of one template. order_returns keeps each partial return once, and
-- the CHECK keeps the returns of an order within its amount.

ALTER TABLE templates
  ADD COLUMN stacking VARCHAR(12) NOT NULL DEFAULT 'exclusive';

ALTER TABLE user_coupons
  ADD COLUMN hold_expires_at DATETIME(6) NULL,
  ADD KEY idx_user_coupons_hold (status, hold_expires_at);

CREATE TABLE checkout_orders (
  order_id VARBINARY(64) NOT NULL PRIMARY KEY,
  stacking VARCHAR(12) NOT NULL,
  coupons BIGINT NOT NULL DEFAULT 0,
  amount_cents BIGINT NOT NULL DEFAULT 0,
  returned_cents BIGINT NOT NULL DEFAULT 0,
  hold_state VARCHAR(10) NULL,
  hold_codes VARBINARY(200) NULL,
  hold_expires_at DATETIME(6) NULL,
  discount_cents BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME(6) NOT NULL,
  KEY idx_checkout_orders_hold (hold_state, hold_expires_at),
  CONSTRAINT ck_checkout_orders_coupons CHECK (coupons >= 0),
  CONSTRAINT ck_checkout_orders_returns CHECK (returned_cents >= 0 AND returned_cents <= amount_cents)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE order_coupons (
  order_id VARBINARY(64) NOT NULL,
  coupon_id BIGINT NOT NULL,
  template_id BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (order_id, coupon_id),
  UNIQUE KEY uq_order_coupons_template (order_id, template_id),
  KEY idx_order_coupons_coupon (coupon_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE order_returns (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_id VARBINARY(64) NOT NULL,
  return_id VARBINARY(64) NOT NULL,
  returned_amount_cents BIGINT NOT NULL,
  kept_amount_cents BIGINT NOT NULL,
  discount_kept_cents BIGINT NOT NULL,
  clawback_cents BIGINT NOT NULL,
  full_refund BOOLEAN NOT NULL DEFAULT FALSE,
  created_at DATETIME(6) NOT NULL,
  UNIQUE KEY uq_order_returns_return (order_id, return_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
