-- Eligibility rules (docs/eligibility.md): a template may carry a rule
-- over the customer, the order, the channel and the time; '' admits
-- everyone.
ALTER TABLE templates ADD COLUMN eligibility VARCHAR(2000) NOT NULL DEFAULT '';
