-- Identities and keys compare byte for byte, as they do in Redis, in Go and
-- in SQLite: `Casey` and `casey` are two users, `josé` is not `jose`, and
-- `ｃａｓｅｙ` is not `casey`. The tables were made with the server's default
-- collation, which folds case, accents and (on some servers) width, so the
-- database saw one user, key or order where the rest of the service saw two.
--
-- VARBINARY rather than the utf8mb4_bin collation: utf8mb4_bin pads with
-- spaces when it compares (on MariaDB and MySQL alike), so `casey ` would
-- still equal `casey`.
-- The lengths are in bytes: user ids, usernames, idempotency keys, order ids,
-- codes and token hashes are ASCII by their own rules; names of people and
-- tokens (up to 100 characters) get room for four bytes each. Making a
-- comparison finer cannot make two existing rows collide, so the unique
-- indexes are rebuilt as they are.

ALTER TABLE user_coupons
  MODIFY code VARBINARY(16) NOT NULL,
  MODIFY user_id VARBINARY(64) NOT NULL,
  MODIFY request_id VARBINARY(128) NOT NULL,
  MODIFY order_id VARBINARY(64) NULL;

ALTER TABLE coupon_use_log
  MODIFY order_id VARBINARY(64) NOT NULL,
  MODIFY user_id VARBINARY(64) NOT NULL,
  MODIFY cashier VARBINARY(400) NOT NULL;

ALTER TABLE users
  MODIFY username VARBINARY(64) NOT NULL;

ALTER TABLE api_tokens
  MODIFY name VARBINARY(400) NOT NULL,
  MODIFY token_hash VARBINARY(64) NOT NULL;

ALTER TABLE audit_log
  MODIFY actor VARBINARY(400) NOT NULL,
  MODIFY target VARBINARY(400) NOT NULL;

ALTER TABLE settings
  MODIFY name VARBINARY(64) NOT NULL;
