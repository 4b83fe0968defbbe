package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestLoadTimezone(t *testing.T) {
	for env, want := range map[string]string{"": "UTC", "UTC": "UTC", "Asia/Tokyo": "Asia/Tokyo", "America/New_York": "America/New_York"} {
		c, err := loadConfig(func(k string) string {
			if k == "COUPON_TIMEZONE" {
				return env
			}
			return ""
		})
		if err != nil || c.Location == nil || c.Location.String() != want {
			t.Errorf("%q: %v, %v; want %s", env, c.Location, err, want)
		}
	}
}

// A zone the database does not know stops the service before it opens
// anything, with a message naming the variable.
func TestBadTimezoneRefusesToStart(t *testing.T) {
	for _, bad := range []string{"Mars/Olympus_Mons", "Local", "EST5EDT ", "../../etc/passwd"} {
		var stdout, stderr bytes.Buffer
		dir := t.TempDir()
		code := run(context.Background(), []string{"serve"}, func(k string) string {
			switch k {
			case "COUPON_TIMEZONE":
				return bad
			case "COUPON_DATA_DIR":
				return dir
			}
			return ""
		}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "COUPON_TIMEZONE must be an IANA time zone name") ||
			strings.Contains(stdout.String(), "listening") {
			t.Errorf("%q: exit %d, stderr %q, stdout %q", bad, code, stderr.String(), stdout.String())
		}
	}
}
