-- Shared codes and archived templates (see the MySQL file of the same
-- version for why each column and index is there). SQLite says the same with
-- a partial unique index: the code of a shared template that is not archived
-- is unique.

ALTER TABLE templates ADD COLUMN code_mode VARCHAR(10) NOT NULL DEFAULT 'unique';
ALTER TABLE templates ADD COLUMN shared_code VARCHAR(32) NOT NULL DEFAULT '';
CREATE UNIQUE INDEX uq_templates_shared_code ON templates (shared_code)
  WHERE code_mode = 'shared' AND status <> 'archived';

ALTER TABLE user_coupons ADD COLUMN claim_order_id VARCHAR(64) NULL;
CREATE INDEX idx_user_coupons_claim_order ON user_coupons (claim_order_id, template_id, user_id);
