-- Background jobs: bulk codes, imports and issues to a list of users
-- (docs/jobs.md).
--
-- A job row is claimed by one instance at a time: owner and lease_until are
-- set by a guarded UPDATE that only matches a queued job or one whose lease
-- ran out, and every batch the job commits renews the lease with a guard on
-- owner and done, in the transaction that writes the batch's rows. A batch is
-- therefore done exactly once: an instance that lost its lease (it stalled, or
-- died and was taken over) cannot commit.
--
-- job_chunks holds a job's input (the uploaded CSV or list) and its result
-- CSV in pieces of at most 1 MiB each, so that neither needs a packet larger
-- than the server's max_allowed_packet; a result piece is written by the
-- batch it reports on, in the same transaction.

CREATE TABLE jobs (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind VARCHAR(10) NOT NULL,
  template_id BIGINT NOT NULL,
  state VARCHAR(10) NOT NULL,
  params VARBINARY(400) NOT NULL,
  done BIGINT NOT NULL DEFAULT 0,
  total BIGINT NOT NULL,
  errors BIGINT NOT NULL DEFAULT 0,
  message VARCHAR(400) NOT NULL DEFAULT '',
  actor VARBINARY(400) NOT NULL,
  owner VARBINARY(64) NULL,
  lease_until DATETIME(6) NULL,
  result_parts BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL,
  started_at DATETIME(6) NULL,
  finished_at DATETIME(6) NULL,
  KEY idx_jobs_state (state, lease_until),
  KEY idx_jobs_template (template_id, id),
  KEY idx_jobs_finished (finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_chunks (
  job_id BIGINT NOT NULL,
  part VARCHAR(10) NOT NULL,
  seq BIGINT NOT NULL,
  data MEDIUMBLOB NOT NULL,
  PRIMARY KEY (job_id, part, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Codes made from a pattern ("SPRING-####-####") are longer than the 13
-- characters of a random code, and imported codes keep their own length.
-- The export reads a template's coupons in id order, page by page.
ALTER TABLE user_coupons
  MODIFY code VARBINARY(64) NOT NULL,
  ADD KEY idx_user_coupons_template_id (template_id, id);
