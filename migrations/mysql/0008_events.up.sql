-- Events and webhooks (docs/events.md).
--
-- events is the outbox: every change writes its event in its own
-- transaction, so an event exists exactly when its change committed.
-- webhook_deliveries holds one row per event and endpoint, written in the
-- same transaction as the event: the dispatchers of every instance lease due
-- rows with a guarded UPDATE (lease_token, lease_until) and record each try
-- in webhook_attempts, the delivery log the console shows.

CREATE TABLE events (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  type VARCHAR(40) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  data MEDIUMTEXT NOT NULL,
  KEY idx_events_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE webhook_endpoints (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  url VARCHAR(2000) NOT NULL,
  secret VARCHAR(200) NOT NULL,
  event_types VARCHAR(1000) NOT NULL DEFAULT '',
  description VARCHAR(200) NOT NULL DEFAULT '',
  enabled BOOLEAN NOT NULL DEFAULT TRUE,
  failing_since DATETIME(6) NULL,
  disabled_at DATETIME(6) NULL,
  created_by VARCHAR(100) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE webhook_deliveries (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  endpoint_id BIGINT NOT NULL,
  event_id BIGINT NOT NULL,
  state VARCHAR(10) NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(6) NOT NULL,
  first_attempt_at DATETIME(6) NULL,
  last_attempt_at DATETIME(6) NULL,
  last_status_code INT NOT NULL DEFAULT 0,
  lease_token VARCHAR(40) NULL,
  lease_until DATETIME(6) NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  UNIQUE KEY uq_webhook_deliveries_event (endpoint_id, event_id),
  KEY idx_webhook_deliveries_due (state, next_attempt_at),
  KEY idx_webhook_deliveries_lease (lease_token),
  KEY idx_webhook_deliveries_event (event_id),
  KEY idx_webhook_deliveries_updated (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE webhook_attempts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  delivery_id BIGINT NOT NULL,
  endpoint_id BIGINT NOT NULL,
  event_id BIGINT NOT NULL,
  event_type VARCHAR(40) NOT NULL,
  attempted_at DATETIME(6) NOT NULL,
  ok BOOLEAN NOT NULL,
  status_code INT NOT NULL DEFAULT 0,
  duration_ms BIGINT NOT NULL DEFAULT 0,
  error VARCHAR(500) NOT NULL DEFAULT '',
  KEY idx_webhook_attempts_endpoint (endpoint_id, id),
  KEY idx_webhook_attempts_at (attempted_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
