package services_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// Identities and keys compare byte for byte on every backend: a variant of one
// in case, accents, width or trailing spaces is another identity, never the
// same one. user_id, order ids and idempotency keys are ASCII by their rules,
// so their variants are in case; usernames at login are free text.

// caseVariants are user ids that a case-insensitive collation takes for one.
var caseVariants = []string{"casey6213", "CASEY6213", "Casey6213"}

func TestIdentityClaimsPerUser(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 10, 1, 100)
	codes := map[string]string{}
	for i, user := range caseVariants {
		res, err := f.Claim(tp.ID, user, fmt.Sprintf("identity-claim-%d", i))
		if err != nil {
			t.Fatalf("claim for %s after %v: %v", user, caseVariants[:i], err)
		}
		if res.Duplicate || res.Coupon == nil || res.Coupon.UserID != user {
			t.Fatalf("claim for %s: %+v, want a new coupon of %s", user, res, user)
		}
		if *res.Coupon.UserOrdinal != 1 {
			t.Fatalf("coupon of %s holds ordinal %d, want 1 (its own first)", user, *res.Coupon.UserOrdinal)
		}
		codes[user] = res.Coupon.Code
	}
	if len(f.Coupons()) != len(caseVariants) {
		t.Fatalf("%d coupons, want %d", len(f.Coupons()), len(caseVariants))
	}
	for _, user := range caseVariants {
		cs, err := f.Core.ListUserCoupons(f.Ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].UserID != user || cs[0].Code != codes[user] {
			t.Errorf("coupons of %s: %+v, want only %s", user, cs, codes[user])
		}
	}
	// Each user's limit of one is their own: a second claim of each is refused.
	for i, user := range caseVariants {
		_, err := f.Claim(tp.ID, user, fmt.Sprintf("identity-again-%d", i))
		assertClaimCode(t, err, models.CodeUserLimitReached)
	}
	if cs, err := f.Core.ListUserCoupons(f.Ctx, "cASEY6213"); err != nil || len(cs) != 0 {
		t.Errorf("coupons of cASEY6213, who claimed none: %+v, %v", cs, err)
	}
	f.assertAgree(c, tp)

	// Counters rebuilt from the database (Redis lost them) keep the users apart.
	f.Env.FlushRedis(t)
	res, err := f.Claim(tp.ID, "cAsEy6213", "identity-after-flush")
	if err != nil || res.Duplicate || res.Coupon.UserID != "cAsEy6213" {
		t.Fatalf("claim after the counters were rebuilt: %+v, %v", res, err)
	}
	f.assertAgree(c, tp)
}

func TestIdentityIdempotencyKeys(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 10, 5, 100)
	first := f.MustClaim(tp.ID, "ann", "Order-Key-1")
	// The same user and template, a key that differs only in case: a new claim.
	second := f.MustClaim(tp.ID, "ann", "order-key-1")
	// Another user with a case variant of the key: their own new claim.
	third := f.MustClaim(tp.ID, "ben", "ORDER-KEY-1")
	if first.Coupon.ID == second.Coupon.ID || second.Coupon.ID == third.Coupon.ID || first.Coupon.ID == third.Coupon.ID {
		t.Fatalf("coupons %d, %d, %d: want three", first.Coupon.ID, second.Coupon.ID, third.Coupon.ID)
	}
	if third.Coupon.UserID != "ben" {
		t.Fatalf("ben's claim answered the coupon of %s", third.Coupon.UserID)
	}
	// Each key replays its own claim, byte for byte.
	for key, want := range map[string]*claims.ClaimResult{"Order-Key-1": first, "order-key-1": second} {
		res, err := f.Claim(tp.ID, "ann", key)
		if err != nil || !res.Duplicate || res.Coupon.ID != want.Coupon.ID {
			t.Errorf("replay of %q: %+v, %v; want coupon %d", key, res, err, want.Coupon.ID)
		}
	}
	if n := f.couponCount(); n != 3 {
		t.Fatalf("%d coupons, want 3", n)
	}
	f.assertAgree(c, tp)
}

func TestIdentityOrders(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("ann")
	redeem := func(order, cashier string) (*checkout.RedeemResult, error) {
		return f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: 2000, Cashier: cashier})
	}
	if res, err := redeem("order-7", "casey"); err != nil || res.Duplicate {
		t.Fatalf("redeem for order-7: %+v, %v", res, err)
	}
	// Another order, in another case: not a replay of order-7.
	_, err := redeem("ORDER-7", "casey")
	assertClaimCode(t, err, models.CodeAlreadyUsed)
	_, err = f.refund(c, "ORDER-7")
	assertClaimCode(t, err, models.CodeNotRedeemed)
	if got := f.coupon(c.ID); got.Status != models.CouponUsed || *got.OrderID != "order-7" {
		t.Fatalf("coupon after the refusals: %s by %v", got.Status, got.OrderID)
	}

	// Refunded, then redeemed by the order in the other case: a second,
	// separate redemption with its own use log row.
	f.mustRefund(c, "order-7")
	if res, err := redeem("ORDER-7", "Casey"); err != nil || res.Duplicate {
		t.Fatalf("redeem for ORDER-7 after order-7's refund: %+v, %v", res, err)
	}
	logs := f.logs(c.ID)
	if len(logs) != 2 || logs[0].OrderID != "order-7" || !logs[0].UndoFlag || logs[0].Cashier != "casey" ||
		logs[1].OrderID != "ORDER-7" || logs[1].UndoFlag || logs[1].Cashier != "Casey" {
		t.Fatalf("use log %+v, want order-7 (undone, by casey) and ORDER-7 (live, by Casey)", logs)
	}
	if res, err := f.refund(c, "order-7"); err != nil || !res.Duplicate {
		t.Fatalf("refund of order-7 again: %+v, %v; want duplicate", res, err)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponUsed || *got.OrderID != "ORDER-7" {
		t.Fatalf("ORDER-7's redemption was undone by order-7's refund: %s by %v", got.Status, got.OrderID)
	}
	f.mustRefund(c, "ORDER-7")

	// The cashiers casey and Casey each see their own redemptions.
	for cashier, order := range map[string]string{"casey": "order-7", "Casey": "ORDER-7"} {
		rs, err := f.Core.ListCashierRedemptions(f.Ctx, cashier, 10)
		if err != nil || len(rs) != 1 || rs[0].OrderID != order {
			t.Errorf("redemptions of cashier %s: %+v, %v; want only %s", cashier, rs, err, order)
		}
	}
}

func TestIdentityCouponCodes(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("ann")
	// A code is typed in capitals or not, with or without dashes: the one
	// normalisation there is, before the lookup.
	lower := strings.ToLower(c.Code[:4] + "-" + c.Code[4:8] + "-" + c.Code[8:])
	if d, err := f.Core.GetCoupon(f.Ctx, lower); err != nil || d.Coupon.ID != c.ID {
		t.Fatalf("GetCoupon(%q) = %+v, %v", lower, d, err)
	}
	// Accented and full-width look-alikes are no code characters.
	for _, variant := range []string{
		"É" + c.Code[1:],
		c.Code[:1] + "\u0301" + c.Code[1:],                           // a combining accent
		strings.Map(func(r rune) rune { return r + 0xFEE0 }, c.Code), // full width
	} {
		_, err := f.Core.GetCoupon(f.Ctx, variant)
		assertClaimCode(t, err, models.CodeInvalidRequest, "code")
	}
}

func TestIdentityUsernames(t *testing.T) {
	env := testenv.New(t, services.Config{AdminConfig: services.AdminConfig{LoginsPerAccount: 3, LoginsPerAddress: 1000}})
	ctx := context.Background()
	svc := env.Service
	if _, err := svc.CreateUser(ctx, "test", "casey", "casey's password", models.RoleShopper); err != nil {
		t.Fatal(err)
	}
	// Casey is another user than casey.
	if _, err := svc.CreateUser(ctx, "test", "Casey", "Casey's password", models.RoleShopper); err != nil {
		t.Fatalf("create Casey next to casey: %v", err)
	}
	if _, err := svc.CreateUser(ctx, "test", "casey", "another password", models.RoleShopper); !models.IsCode(err, models.CodeInvalidRequest) {
		t.Fatalf("create casey twice: %v", err)
	}
	login := func(username, password, addr string) (*models.User, error) {
		_, u, err := svc.Login(ctx, admin.LoginRequest{Username: username, Password: password, Addr: addr})
		return u, err
	}
	for username, password := range map[string]string{"casey": "casey's password", "Casey": "Casey's password"} {
		if u, err := login(username, password, "192.0.2.1"); err != nil || u.Username != username {
			t.Fatalf("log in as %s: %+v, %v", username, u, err)
		}
	}

	// Variants of casey with casey's password, all from one address: none is
	// casey. Each is tried as often as the account limit allows and more, and
	// none counts against casey's own limit at that address.
	const guesser, owner = "192.0.2.66", "192.0.2.7"
	variants := []string{"CASEY", "cAsEy", "cásey", "caséy", "cäsey", "ｃａｓｅｙ", "casey ", "casey\u00a0", "casey\u200b", "ca\u0301sey"}
	for _, v := range variants {
		for range 3 {
			u, err := login(v, "casey's password", guesser)
			if err == nil {
				t.Fatalf("log in as %q with casey's password: logged in as %s", v, u.Username)
			}
			if !models.IsCode(err, models.CodeUnauthorized) && !models.IsCode(err, models.CodeRateLimited) {
				t.Fatalf("log in as %q: %v", v, err)
			}
		}
	}
	if u, err := login("casey", "casey's password", guesser); err != nil || u.Username != "casey" {
		t.Fatalf("casey after attempts on look-alike names: %+v, %v", u, err)
	}
	// casey's own limit still holds.
	for i := range 3 {
		if _, err := login("casey", "wrong", owner); !models.IsCode(err, models.CodeUnauthorized) {
			t.Fatalf("wrong password %d: %v", i+1, err)
		}
	}
	if _, err := login("casey", "casey's password", owner); !models.IsCode(err, models.CodeRateLimited) {
		t.Fatalf("casey after 3 wrong passwords: %v, want rate_limited", err)
	}
	// ...and is casey's alone.
	if u, err := login("Casey", "Casey's password", owner); err != nil || u.Username != "Casey" {
		t.Fatalf("Casey while casey is limited: %+v, %v", u, err)
	}
}

func TestIdentityTokenNames(t *testing.T) {
	env := testenv.New(t, services.Config{})
	ctx := context.Background()
	seen := map[string]bool{}
	for _, name := range []string{"shop", "Shop", "shöp", "ｓｈｏｐ"} {
		token, rec, err := env.Service.CreateToken(ctx, "test", models.RoleApp, name)
		if err != nil {
			t.Fatalf("token %q: %v", name, err)
		}
		if seen[token] {
			t.Fatalf("token %q repeats another", name)
		}
		seen[token] = true
		p, err := env.Service.AuthenticateToken(ctx, token)
		if err != nil || p.Name != "token:"+name || rec.Name != name {
			t.Fatalf("token %q authenticates as %+v, %v", name, p, err)
		}
	}
}

// identityColumns are the columns that hold an identity or a key.
var identityColumns = map[string][]string{
	"user_coupons":   {"code", "user_id", "request_id", "order_id"},
	"coupon_use_log": {"order_id", "user_id", "cashier"},
	"users":          {"username"},
	"api_tokens":     {"name", "token_hash"},
	"audit_log":      {"actor", "target"},
	"settings":       {"name"},
}

// TestIdentityColumnsBinary checks the schema itself, so that a new table or
// migration cannot bring back a folding comparison: on MySQL every identity
// column is VARBINARY (no collation, no space padding) and the unique indexes
// over them are still there; on SQLite no column or index names a collation,
// so every comparison is the default BINARY one.
func TestIdentityColumnsBinary(t *testing.T) {
	env := testenv.New(t, services.Config{})
	db := env.Backends.DB
	if env.Backends.Dialect != core.DialectMySQL {
		var sqls []string
		if err := db.Raw("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").Scan(&sqls).Error; err != nil {
			t.Fatal(err)
		}
		for _, s := range sqls {
			if u := strings.ToUpper(s); strings.Contains(u, "COLLATE") || strings.Contains(u, "NOCASE") {
				t.Errorf("the schema names a collation: %s", s)
			}
		}
		return
	}
	for table, columns := range identityColumns {
		for _, column := range columns {
			var types []string
			err := db.Raw(`SELECT DATA_TYPE FROM information_schema.COLUMNS
				WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`, table, column).Scan(&types).Error
			if err != nil {
				t.Fatal(err)
			}
			if len(types) != 1 || types[0] != "varbinary" {
				t.Errorf("%s.%s is %v, want varbinary", table, column, types)
			}
		}
	}
	var indexes []string
	err := db.Raw(`SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND NON_UNIQUE = 0 ORDER BY INDEX_NAME`).Scan(&indexes).Error
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"uq_api_tokens_hash", "uq_use_log_coupon_order", "uq_user_coupons_code",
		"uq_user_coupons_request", "uq_user_coupons_user_ordinal", "uq_users_username"} {
		if !slices.Contains(indexes, want) {
			t.Errorf("the unique index %s is gone (have %v)", want, indexes)
		}
	}
}
