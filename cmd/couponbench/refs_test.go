package main

import (
	"context"
	"os"
	"testing"
)

// The references run against real servers when CI gives them:
// COUPON_TEST_MYSQL_DSN and COUPON_TEST_REDIS_ADDR.

func TestBaselineAndRawRedeem(t *testing.T) {
	dsn := os.Getenv("COUPON_TEST_MYSQL_DSN")
	if dsn == "" {
		t.Skip("COUPON_TEST_MYSQL_DSN not set")
	}
	ctx := context.Background()
	db, err := openDB(ctx, dsn, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runID := newRunID()
	t.Run("BaselineSoldOut", func(t *testing.T) {
		s := runBaseline(ctx, db, runID, 300, 250, 32)
		if s.Failed() || s.OK != 250 || s.Results["sold_out"] != 50 {
			t.Errorf("baseline: %+v", s)
		}
	})
	t.Run("RawRedeem", func(t *testing.T) {
		s := runRawRedeem(ctx, db, runID, 300, 32, 1)
		if s.Failed() || s.OK != 300 {
			t.Errorf("rawredeem: %+v", s)
		}
	})
	t.Run("RawOrder", func(t *testing.T) {
		s := runRawOrder(ctx, db, runID, 300, 32, 1)
		if s.Failed() || s.OK != 300 || s.Results["redeemed"] != 300 {
			t.Errorf("raworder: %+v", s)
		}
	})
	t.Run("RawOrderLines", func(t *testing.T) {
		s := runRawOrderLines(ctx, db, runID, 300, 32, 1)
		if s.Failed() || s.OK != 300 || s.Results["redeemed"] != 300 {
			t.Errorf("raworderlines: %+v", s)
		}
		if !hasPassingCheck(s, "cart rows") {
			t.Errorf("raworderlines: no passing cart rows check: %+v", s.Checks)
		}
	})
	var left int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema=DATABASE() AND table_name LIKE ?", "bench\\_%"+runID).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d reference tables left behind (%v)", left, err)
	}
}

func TestLimit(t *testing.T) {
	addr := os.Getenv("COUPON_TEST_REDIS_ADDR")
	if addr == "" {
		t.Skip("COUPON_TEST_REDIS_ADDR not set")
	}
	ctx := context.Background()
	rdb, err := openRedis(ctx, addr, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	runID := newRunID()
	plan := flashPlan(2000, 1200, 0.5, 1)
	s := runLimit(ctx, rdb, runID, plan, 1200, 200, 32)
	if s.Failed() || s.OK != 200 {
		t.Errorf("limit: %+v", s)
	}
	keys, err := rdb.Keys(ctx, newLimitKeys(runID).prefix+"*").Result()
	if err != nil || len(keys) != 0 {
		t.Errorf("%d keys left behind (%v)", len(keys), err)
	}
}

// hasPassingCheck says s ran the named check and it passed.
func hasPassingCheck(s *Summary, name string) bool {
	for _, c := range s.Checks {
		if c.Name == name {
			return c.OK
		}
	}
	return false
}
