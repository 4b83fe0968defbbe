-- The schema of couponsvc on MySQL/MariaDB. Times are UTC, money integer cents.

CREATE TABLE campaigns (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  budget_cents BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE templates (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
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
  claim_starts_at DATETIME(6) NOT NULL,
  claim_ends_at DATETIME(6) NULL,
  valid_from DATETIME(6) NULL,
  valid_until DATETIME(6) NULL,
  valid_days BIGINT NOT NULL DEFAULT 0,
  refund_policy VARCHAR(10) NOT NULL,
  extend_on_refund BOOLEAN NOT NULL DEFAULT FALSE,
  status VARCHAR(10) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  KEY idx_templates_campaign (campaign_id),
  CONSTRAINT fk_templates_campaign FOREIGN KEY (campaign_id) REFERENCES campaigns (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- slot and user_ordinal are the database's own guard against oversell: a live
-- coupon holds one of 1..total_stock and one of 1..per_user_limit, and the
-- unique indexes refuse a second holder. NULL (given back) never collides.
CREATE TABLE user_coupons (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  code VARCHAR(16) NOT NULL,
  template_id BIGINT NOT NULL,
  campaign_id BIGINT NOT NULL,
  user_id VARCHAR(64) NOT NULL,
  status VARCHAR(10) NOT NULL,
  slot BIGINT NULL,
  user_ordinal BIGINT NULL,
  request_id VARCHAR(128) NOT NULL,
  value_cents BIGINT NOT NULL,
  claimed_at DATETIME(6) NOT NULL,
  valid_from DATETIME(6) NOT NULL,
  valid_until DATETIME(6) NOT NULL,
  used_at DATETIME(6) NULL,
  order_id VARCHAR(64) NULL,
  version BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME(6) NOT NULL,
  UNIQUE KEY uq_user_coupons_code (code),
  UNIQUE KEY uq_user_coupons_request (request_id),
  UNIQUE KEY uq_user_coupons_slot (template_id, slot),
  UNIQUE KEY uq_user_coupons_user_ordinal (template_id, user_id, user_ordinal),
  KEY idx_user_coupons_user (user_id, template_id),
  KEY idx_user_coupons_claimed (template_id, claimed_at),
  CONSTRAINT fk_user_coupons_template FOREIGN KEY (template_id) REFERENCES templates (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE coupon_use_log (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  coupon_id BIGINT NOT NULL,
  order_id VARCHAR(64) NOT NULL,
  user_id VARCHAR(64) NOT NULL,
  template_id BIGINT NOT NULL,
  order_amount_cents BIGINT NOT NULL,
  discount_cents BIGINT NOT NULL,
  cashier VARCHAR(100) NOT NULL,
  used_at DATETIME(6) NOT NULL,
  undo_flag BOOLEAN NOT NULL DEFAULT FALSE,
  undone_at DATETIME(6) NULL,
  UNIQUE KEY uq_use_log_coupon_order (coupon_id, order_id),
  KEY idx_use_log_template (template_id, used_at),
  KEY idx_use_log_cashier (cashier, used_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE users (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  username VARCHAR(64) NOT NULL,
  password_hash VARCHAR(100) NOT NULL,
  role VARCHAR(10) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  UNIQUE KEY uq_users_username (username)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE api_tokens (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  role VARCHAR(10) NOT NULL,
  token_hash CHAR(64) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  revoked_at DATETIME(6) NULL,
  UNIQUE KEY uq_api_tokens_hash (token_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE audit_log (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  actor VARCHAR(100) NOT NULL,
  action VARCHAR(50) NOT NULL,
  target VARCHAR(100) NOT NULL,
  detail TEXT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  KEY idx_audit_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
