-- Shared codes and archived templates (docs/shared-codes.md).
--
-- code_mode says how a template's coupons are named: 'unique' (a code per
-- claimed coupon) or 'shared' (one code, shared_code, that every shopper
-- types at checkout). shared_code is stored upper case, so that comparing
-- bytes is comparing without case. shared_code_live is the code while it is
-- in use (a shared template that is not archived) and NULL otherwise; its
-- unique index makes the database refuse a second live template with the
-- same code, also when two admins create them at once, and frees the code
-- for reuse when its template is archived. A checkout looks a code up by
-- shared_code (the same query on both dialects), hence its plain index.
--
-- claim_order_id marks a coupon claimed with a shared code inside a hold or
-- redemption of that order: a release, an expiry or a failed confirm of the
-- order gives such a coupon's claim back, where another coupon would only
-- go back to its holder.

ALTER TABLE templates
  ADD COLUMN code_mode VARCHAR(10) NOT NULL DEFAULT 'unique',
  ADD COLUMN shared_code VARBINARY(32) NOT NULL DEFAULT '',
  ADD COLUMN shared_code_live VARBINARY(32) AS
    (CASE WHEN code_mode = 'shared' AND status <> 'archived' THEN shared_code END) STORED,
  ADD UNIQUE KEY uq_templates_shared_code (shared_code_live),
  ADD KEY idx_templates_shared_code (shared_code);

ALTER TABLE user_coupons
  ADD COLUMN claim_order_id VARBINARY(64) NULL,
  ADD KEY idx_user_coupons_claim_order (claim_order_id, template_id, user_id);
