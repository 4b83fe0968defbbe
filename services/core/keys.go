package core

import (
	"strconv"
	"time"
)

// Keys names the Redis keys of couponsvc. Every key of a campaign carries the
// hash tag {c<campaign_id>} so that a script over them runs on one Redis
// Cluster slot. The prefix lets tests and several deployments share a Redis.
type Keys struct{ Prefix string }

func (k Keys) Campaign(cid int64) string { return k.Prefix + "{c" + strconv.FormatInt(cid, 10) + "}:" }

func (k Keys) Budget(cid int64) string  { return k.Campaign(cid) + "budget" }
func (k Keys) Pending(cid int64) string { return k.Campaign(cid) + "pending" }

// Recent holds reservations confirmed within recentWindow, which a reload
// still counts as taken (see coupon_load.lua).
func (k Keys) Recent(cid int64) string   { return k.Campaign(cid) + "recent" }
func (k Keys) loadLock(cid int64) string { return k.Campaign(cid) + "loadlock" }

func (k Keys) Template(cid, tid int64) string {
	return k.Campaign(cid) + "t:" + strconv.FormatInt(tid, 10)
}
func (k Keys) Free(cid, tid int64) string  { return k.Template(cid, tid) + ":free" }
func (k Keys) Users(cid, tid int64) string { return k.Template(cid, tid) + ":users" }

// rule is a template's claim rule (see claimRule), which coupon_deduct.lua
// checks on every claim.
func (k Keys) rule(cid, tid int64) string { return k.Template(cid, tid) + ":rule" }

// Idem is the idempotency key of a claim. Keys are scoped to the campaign so
// that the claim script touches one slot; the database's unique request_id
// catches the same key reused across campaigns.
func (k Keys) Idem(cid int64, requestID string) string { return k.Campaign(cid) + "idem:" + requestID }

// couponLock is the redislock mutex of one coupon (redeem, refund, revoke).
func (k Keys) couponLock(cid, couponID int64) string {
	return k.Campaign(cid) + "lock:" + strconv.FormatInt(couponID, 10)
}

// returned marks a coupon whose slot went back to the pool (coupon_return.lua).
func (k Keys) returned(cid, couponID int64) string {
	return k.Campaign(cid) + "ret:" + strconv.FormatInt(couponID, 10)
}

// ClaimKeys are the six keys of coupon_release.lua, the first six of
// coupon_deduct.lua.
func (k Keys) ClaimKeys(cid, tid int64, requestID string) []string {
	return []string{k.Budget(cid), k.Template(cid, tid), k.Free(cid, tid), k.Users(cid, tid),
		k.Idem(cid, requestID), k.Pending(cid)}
}

// DeductKeys are the seven keys of coupon_deduct.lua: claimKeys and the
// template's claim rule.
func (k Keys) DeductKeys(cid, tid int64, requestID string) []string {
	tpl := k.Template(cid, tid)
	return []string{k.Budget(cid), tpl, tpl + ":free", tpl + ":users", k.Idem(cid, requestID), k.Pending(cid),
		tpl + ":rule"}
}

// RecentWindow is how long a confirmed reservation still counts as in flight
// for a reload: far longer than a reload's read of the database takes.
const RecentWindow = time.Minute

// RevokedTokens is the pub/sub channel on which a revocation publishes the
// id of the API token it revoked, once committed (docs/redis-keys.md).
func (k Keys) RevokedTokens() string { return k.Prefix + "token:revoked" }

// IdempotentAnswer keeps the answer of a request made with an
// Idempotency-Key; scope is the hash of who asked, where and with which key
// (docs/idempotency.md).
func (k Keys) IdempotentAnswer(scope string) string { return k.Prefix + "idem:" + scope }

// The Redis keys of the last runs: a note for people, shared by every
// instance, not a state anything depends on.
func (k Keys) LastReconcile() string { return k.Prefix + "reconcile:last_full" }

func (k Keys) LastRepairPass() string { return k.Prefix + "reconcile:last_pass" }

// The keys of reconciliation. Reconciled is per campaign (its hash tag); the
// pass's lock and cursors are global.
func (k Keys) Reconciled(cid int64) string { return k.Campaign(cid) + "reconciled" }

func (k Keys) RepairLock() string { return k.Prefix + "reconcile:lock" }

func (k Keys) StockCursor() string { return k.Prefix + "reconcile:stock_cursor" }

func (k Keys) CampaignCursor() string { return k.Prefix + "reconcile:campaign_cursor" }
