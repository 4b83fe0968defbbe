package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestMigrateStatusCommand: `couponsvc migrate status` prints the version,
// the dirty flag and the pending files, and applies none of them.
func TestMigrateStatusCommand(t *testing.T) {
	f := testenv.NewFresh(t)
	env := map[string]string{
		"COUPON_DATA_DIR":     t.TempDir(),
		"COUPON_MYSQL_DSN":    f.MySQLDSN,
		"COUPON_REDIS_ADDR":   f.RedisAddr,
		"COUPON_REDIS_ADDRS":  strings.Join(f.RedisAddrs, ","),
		"COUPON_REDIS_PREFIX": f.Prefix,
		"COUPON_DEMO":         "0",
	}
	couponsvc := func(args ...string) (string, int) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr)
		if code != 0 {
			t.Logf("couponsvc %s: stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
		return stdout.String(), code
	}

	wantBefore := "version: none\ndirty: false\nlatest: 24\n" +
		"pending: 0001_init.up.sql\npending: 0002_settings.up.sql\npending: 0003_binary_identities.up.sql\npending: 0004_checkout.up.sql\npending: 0005_checkout_backfill.up.sql\npending: 0006_shared_codes.up.sql\npending: 0007_jobs.up.sql\npending: 0008_events.up.sql\npending: 0009_campaign_status.up.sql\npending: 0011_shared_code_normal_form.up.sql\npending: 0012_carts_with_lines.up.sql\npending: 0013_return_lines.up.sql\npending: 0014_order_lines_no_sku_index.up.sql\npending: 0015_percent_basis_points.up.sql\npending: 0016_full_price_only.up.sql\npending: 0017_unit_selection.up.sql\npending: 0018_template_actions.up.sql\npending: 0019_cart_conditions.up.sql\npending: 0020_eligibility.up.sql\npending: 0021_automatic_offers.up.sql\npending: 0022_superseded_parts_and_payable.up.sql\npending: 0023_hold_parked.up.sql\npending: 0024_use_log_actions.up.sql\n"
	for range 2 { // status changes nothing
		if out, code := couponsvc("migrate", "status"); out != wantBefore || code != 0 {
			t.Fatalf("status before: exit %d\n%s\nwant\n%s", code, out, wantBefore)
		}
	}
	if out, code := couponsvc("migrate"); out != "migrations applied\n" || code != 0 {
		t.Fatalf("migrate: exit %d, %q", code, out)
	}
	wantAfter := "version: 24\ndirty: false\nlatest: 24\npending: none\n"
	if out, code := couponsvc("migrate", "status"); out != wantAfter || code != 0 {
		t.Fatalf("status after: exit %d\n%s\nwant\n%s", code, out, wantAfter)
	}
	if out, code := couponsvc("migrate", "force", "3"); out != "version 3 recorded as applied\n" || code != 0 {
		t.Fatalf("force: exit %d, %q", code, out)
	}
	if out, code := couponsvc("migrate", "force", "x"); out != "" || code != 1 {
		t.Fatalf("force x: exit %d, %q, want 1 and nothing printed", code, out)
	}
	if out, code := couponsvc("migrate", "stats"); out != "" || code != 1 {
		t.Fatalf("migrate stats: exit %d, %q, want 1 and nothing printed", code, out)
	}
}
