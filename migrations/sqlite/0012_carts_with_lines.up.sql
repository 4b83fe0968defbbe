-- Carts with lines (see the MySQL file of the same version for what each
-- column is). SQLite does not bound VARCHAR, so kind needs no change.
ALTER TABLE templates ADD COLUMN applies_to VARCHAR(10) NOT NULL DEFAULT 'order';
ALTER TABLE templates ADD COLUMN target TEXT NULL;
ALTER TABLE templates ADD COLUMN min_quantity BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN buy_quantity BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN get_quantity BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN get_percent BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN max_applications BIGINT NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN tiers TEXT NULL;
ALTER TABLE templates ADD COLUMN priority BIGINT NOT NULL DEFAULT 100;
ALTER TABLE templates ADD COLUMN currency CHAR(3) NOT NULL DEFAULT '';

ALTER TABLE campaigns ADD COLUMN currency CHAR(3) NOT NULL DEFAULT '';

ALTER TABLE checkout_orders ADD COLUMN currency CHAR(3) NOT NULL DEFAULT '';
ALTER TABLE checkout_orders ADD COLUMN cart_hash VARCHAR(64) NULL;
ALTER TABLE checkout_orders ADD COLUMN shipping_cents BIGINT NOT NULL DEFAULT 0;

CREATE TABLE order_lines (
  order_id VARCHAR(64) NOT NULL,
  line_no INTEGER NOT NULL,
  line_id VARCHAR(256) NOT NULL,
  sku VARCHAR(256) NOT NULL,
  product_id VARCHAR(256) NOT NULL,
  category_ids TEXT NULL,
  quantity BIGINT NOT NULL,
  unit_price_cents BIGINT NOT NULL,
  discountable BOOLEAN NOT NULL DEFAULT TRUE,
  returned_quantity BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (order_id, line_no),
  CONSTRAINT ck_order_lines_returns CHECK (returned_quantity >= 0 AND returned_quantity <= quantity)
);
CREATE UNIQUE INDEX uq_order_lines_line ON order_lines (order_id, line_id);
CREATE INDEX idx_order_lines_sku ON order_lines (sku);

CREATE TABLE order_line_discounts (
  order_id VARCHAR(64) NOT NULL,
  coupon_id BIGINT NOT NULL,
  line_no INTEGER NOT NULL,
  template_id BIGINT NOT NULL,
  discount_cents BIGINT NOT NULL,
  returned_discount_cents BIGINT NOT NULL DEFAULT 0,
  units TEXT NULL,
  created_at DATETIME NOT NULL,
  PRIMARY KEY (order_id, coupon_id, line_no)
);
CREATE INDEX idx_order_line_discounts_coupon ON order_line_discounts (coupon_id);
