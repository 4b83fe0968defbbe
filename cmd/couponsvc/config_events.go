package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// loadEventConfig reads the variables of events and webhooks (see README.md,
// Configuration, and docs/events.md).
func loadEventConfig(getenv func(string) string, c *config) error {
	c.Retention = 30 * 24 * time.Hour
	c.WebhookLease = 60 * time.Second
	if v := getenv("COUPON_WEBHOOK_ALLOW_PRIVATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("COUPON_WEBHOOK_ALLOW_PRIVATE must be 1 or 0, not %q", v)
		}
		c.WebhookAllowPrivate = b
	}
	if v := getenv("COUPON_WEBHOOK_LEASE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 15*time.Second || d > time.Hour {
			return fmt.Errorf("COUPON_WEBHOOK_LEASE must be a duration from 15s to 1h, such as 60s, not %q", v)
		}
		c.WebhookLease = d
	}
	if v := getenv("COUPON_RETENTION"); v != "" {
		d, err := parseDays(v)
		if err != nil || d < time.Hour {
			return fmt.Errorf("COUPON_RETENTION must be a duration of at least 1h, such as 30d or 720h, not %q", v)
		}
		c.Retention = d
	}
	return nil
}

// parseDays is time.ParseDuration that also reads a whole number of days
// ("30d").
func parseDays(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 36500 {
			return 0, fmt.Errorf("bad number of days %q", v)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}
