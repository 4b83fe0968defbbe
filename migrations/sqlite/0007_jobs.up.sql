-- Background jobs (see the MySQL file of the same version for why each table
-- and column is there). SQLite does not enforce VARCHAR lengths, so the code
-- column needs no widening.

CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind VARCHAR(10) NOT NULL,
  template_id BIGINT NOT NULL,
  state VARCHAR(10) NOT NULL,
  params VARCHAR(400) NOT NULL,
  done BIGINT NOT NULL DEFAULT 0,
  total BIGINT NOT NULL,
  errors BIGINT NOT NULL DEFAULT 0,
  message VARCHAR(400) NOT NULL DEFAULT '',
  actor VARCHAR(400) NOT NULL,
  owner VARCHAR(64) NULL,
  lease_until DATETIME NULL,
  result_parts BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME NOT NULL,
  started_at DATETIME NULL,
  finished_at DATETIME NULL
);
CREATE INDEX idx_jobs_state ON jobs (state, lease_until);
CREATE INDEX idx_jobs_template ON jobs (template_id, id);
CREATE INDEX idx_jobs_finished ON jobs (finished_at);

CREATE TABLE job_chunks (
  job_id BIGINT NOT NULL,
  part VARCHAR(10) NOT NULL,
  seq BIGINT NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (job_id, part, seq)
);

CREATE INDEX idx_user_coupons_template_id ON user_coupons (template_id, id);
