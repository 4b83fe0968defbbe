-- Events and webhooks (see the MySQL file of the same version for why each
-- table and index is there; docs/events.md).

CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type VARCHAR(40) NOT NULL,
  created_at DATETIME NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX idx_events_created ON events (created_at);

CREATE TABLE webhook_endpoints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  url VARCHAR(2000) NOT NULL,
  secret VARCHAR(200) NOT NULL,
  event_types VARCHAR(1000) NOT NULL DEFAULT '',
  description VARCHAR(200) NOT NULL DEFAULT '',
  enabled BOOLEAN NOT NULL DEFAULT TRUE,
  failing_since DATETIME NULL,
  disabled_at DATETIME NULL,
  created_by VARCHAR(100) NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);

CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  endpoint_id BIGINT NOT NULL,
  event_id BIGINT NOT NULL,
  state VARCHAR(10) NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME NOT NULL,
  first_attempt_at DATETIME NULL,
  last_attempt_at DATETIME NULL,
  last_status_code INT NOT NULL DEFAULT 0,
  lease_token VARCHAR(40) NULL,
  lease_until DATETIME NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_webhook_deliveries_event ON webhook_deliveries (endpoint_id, event_id);
CREATE INDEX idx_webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX idx_webhook_deliveries_lease ON webhook_deliveries (lease_token);
CREATE INDEX idx_webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX idx_webhook_deliveries_updated ON webhook_deliveries (updated_at);

CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id BIGINT NOT NULL,
  endpoint_id BIGINT NOT NULL,
  event_id BIGINT NOT NULL,
  event_type VARCHAR(40) NOT NULL,
  attempted_at DATETIME NOT NULL,
  ok BOOLEAN NOT NULL,
  status_code INT NOT NULL DEFAULT 0,
  duration_ms BIGINT NOT NULL DEFAULT 0,
  error VARCHAR(500) NOT NULL DEFAULT ''
);
CREATE INDEX idx_webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
CREATE INDEX idx_webhook_attempts_at ON webhook_attempts (attempted_at);
