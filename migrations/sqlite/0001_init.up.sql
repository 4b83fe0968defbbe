-- The schema of couponsvc on SQLite (the embedded default). Times are UTC, money integer cents.

CREATE TABLE campaigns (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name VARCHAR(100) NOT NULL,
  budget_cents BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME NOT NULL
);

CREATE TABLE templates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id BIGINT NOT NULL,
  name VARCHAR(100) NOT NULL,
  description TEXT NOT NULL,
  kind VARCHAR(10) NOT NULL,
  face_value_cents BIGINT NOT NULL DEFAULT 0,
  percent_off BIGINT NOT NULL DEFAULT 0,
  max_discount_cents BIGINT NOT NULL DEFAULT 0,
  min_order_cents BIGINT NOT NULL DEFAULT 0,
  total_stock BIGINT NOT NULL,
  per_user_limit BIGINT NOT NULL,
  claim_starts_at DATETIME NOT NULL,
  claim_ends_at DATETIME NULL,
  valid_from DATETIME NULL,
  valid_until DATETIME NULL,
  valid_days BIGINT NOT NULL DEFAULT 0,
  refund_policy VARCHAR(10) NOT NULL,
  extend_on_refund BOOLEAN NOT NULL DEFAULT FALSE,
  status VARCHAR(10) NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (campaign_id) REFERENCES campaigns (id)
);
CREATE INDEX idx_templates_campaign ON templates (campaign_id);

-- slot and user_ordinal are the database's own guard against oversell: a live
-- coupon holds one of 1..total_stock and one of 1..per_user_limit, and the
-- unique indexes refuse a second holder. NULL (given back) never collides.
CREATE TABLE user_coupons (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  code VARCHAR(16) NOT NULL,
  template_id BIGINT NOT NULL,
  campaign_id BIGINT NOT NULL,
  user_id VARCHAR(64) NOT NULL,
  status VARCHAR(10) NOT NULL,
  slot BIGINT NULL,
  user_ordinal BIGINT NULL,
  request_id VARCHAR(128) NOT NULL,
  value_cents BIGINT NOT NULL,
  claimed_at DATETIME NOT NULL,
  valid_from DATETIME NOT NULL,
  valid_until DATETIME NOT NULL,
  used_at DATETIME NULL,
  order_id VARCHAR(64) NULL,
  version BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (template_id) REFERENCES templates (id)
);
CREATE UNIQUE INDEX uq_user_coupons_code ON user_coupons (code);
CREATE UNIQUE INDEX uq_user_coupons_request ON user_coupons (request_id);
CREATE UNIQUE INDEX uq_user_coupons_slot ON user_coupons (template_id, slot);
CREATE UNIQUE INDEX uq_user_coupons_user_ordinal ON user_coupons (template_id, user_id, user_ordinal);
CREATE INDEX idx_user_coupons_user ON user_coupons (user_id, template_id);
CREATE INDEX idx_user_coupons_claimed ON user_coupons (template_id, claimed_at);

CREATE TABLE coupon_use_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  coupon_id BIGINT NOT NULL,
  order_id VARCHAR(64) NOT NULL,
  user_id VARCHAR(64) NOT NULL,
  template_id BIGINT NOT NULL,
  order_amount_cents BIGINT NOT NULL,
  discount_cents BIGINT NOT NULL,
  cashier VARCHAR(100) NOT NULL,
  used_at DATETIME NOT NULL,
  undo_flag BOOLEAN NOT NULL DEFAULT FALSE,
  undone_at DATETIME NULL
);
CREATE UNIQUE INDEX uq_use_log_coupon_order ON coupon_use_log (coupon_id, order_id);
CREATE INDEX idx_use_log_template ON coupon_use_log (template_id, used_at);
CREATE INDEX idx_use_log_cashier ON coupon_use_log (cashier, used_at);

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username VARCHAR(64) NOT NULL,
  password_hash VARCHAR(100) NOT NULL,
  role VARCHAR(10) NOT NULL,
  created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_users_username ON users (username);

CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name VARCHAR(100) NOT NULL,
  role VARCHAR(10) NOT NULL,
  token_hash CHAR(64) NOT NULL,
  created_at DATETIME NOT NULL,
  revoked_at DATETIME NULL
);
CREATE UNIQUE INDEX uq_api_tokens_hash ON api_tokens (token_hash);

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  actor VARCHAR(100) NOT NULL,
  action VARCHAR(50) NOT NULL,
  target VARCHAR(100) NOT NULL,
  detail TEXT NOT NULL,
  created_at DATETIME NOT NULL
);
CREATE INDEX idx_audit_created ON audit_log (created_at);
