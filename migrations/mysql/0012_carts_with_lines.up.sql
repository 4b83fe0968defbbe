-- Carts with lines (docs/pricing.md): what a template applies to, its kind's
-- fields, its priority and currency; the lines of an order and where each
-- coupon's discount went on them, stored with the hold or the redemption and
-- never re-priced.
--
-- kind grows to VARCHAR(16) for fixed_per_item, buy_x_get_y, free_shipping.
-- currency '' means the deployment's currency (COUPON_CURRENCY): couponsvc
-- writes the deployment's code into every empty one when it starts.
ALTER TABLE templates
  MODIFY kind VARCHAR(16) NOT NULL,
  ADD COLUMN applies_to VARCHAR(10) NOT NULL DEFAULT 'order',
  ADD COLUMN target MEDIUMTEXT NULL,
  ADD COLUMN min_quantity BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN buy_quantity BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN get_quantity BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN get_percent BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN max_applications BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN tiers TEXT NULL,
  ADD COLUMN priority BIGINT NOT NULL DEFAULT 100,
  ADD COLUMN currency CHAR(3) NOT NULL DEFAULT '';

ALTER TABLE campaigns
  ADD COLUMN currency CHAR(3) NOT NULL DEFAULT '';

-- An order's cart: its currency and the fingerprint of its lines and
-- shipping (NULL for an amount-only order). A hold, confirm or redemption
-- with another cart than the order's first is refused.
ALTER TABLE checkout_orders
  ADD COLUMN currency CHAR(3) NOT NULL DEFAULT '',
  ADD COLUMN cart_hash VARBINARY(64) NULL,
  ADD COLUMN shipping_cents BIGINT NOT NULL DEFAULT 0;

-- The lines of an order with lines, in the cart's order (line_no from 0),
-- written once with the order's first hold or redemption. returned_quantity
-- counts the units returned; the CHECK is the database's guard that no
-- return takes back more units than were bought.
CREATE TABLE order_lines (
  order_id VARBINARY(64) NOT NULL,
  line_no INT NOT NULL,
  line_id VARBINARY(256) NOT NULL,
  sku VARBINARY(256) NOT NULL,
  product_id VARBINARY(256) NOT NULL,
  category_ids TEXT NULL,
  quantity BIGINT NOT NULL,
  unit_price_cents BIGINT NOT NULL,
  discountable BOOLEAN NOT NULL DEFAULT TRUE,
  returned_quantity BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (order_id, line_no),
  UNIQUE KEY uq_order_lines_line (order_id, line_id),
  KEY idx_order_lines_sku (sku),
  CONSTRAINT ck_order_lines_returns CHECK (returned_quantity >= 0 AND returned_quantity <= quantity)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Each coupon's discount on each line of an order (line_no -1 is the
-- shipping), with its split over the line's units as runs of equal parts:
-- units is JSON [{"first":0,"count":2,"per_unit_cents":334}, ...];
-- returned_discount_cents is the part of discount_cents its returned units
-- took back.
CREATE TABLE order_line_discounts (
  order_id VARBINARY(64) NOT NULL,
  coupon_id BIGINT NOT NULL,
  line_no INT NOT NULL,
  template_id BIGINT NOT NULL,
  discount_cents BIGINT NOT NULL,
  returned_discount_cents BIGINT NOT NULL DEFAULT 0,
  units TEXT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (order_id, coupon_id, line_no),
  KEY idx_order_line_discounts_coupon (coupon_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
