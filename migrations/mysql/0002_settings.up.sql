-- Settings the service makes for itself and every instance shares, such as
-- the key of the page cookies when COUPON_SESSION_KEY is not set.

CREATE TABLE settings (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  value VARCHAR(1000) NOT NULL,
  created_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
