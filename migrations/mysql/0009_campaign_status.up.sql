-- A campaign can be paused: its templates take no claims until it is
-- resumed (docs/flows.md). Audit filters read by target and by actor, newest
-- first.

ALTER TABLE campaigns ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'active';
CREATE INDEX idx_audit_target ON audit_log (target, id);
CREATE INDEX idx_audit_actor ON audit_log (actor, id);
