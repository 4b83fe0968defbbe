package services

import (
	"strconv"
	"time"
)

// keys names the Redis keys of couponsvc. Every key of a campaign carries the
// hash tag {c<campaign_id>} so that a script over them runs on one Redis
// Cluster slot. The prefix lets tests and several deployments share a Redis.
type keys struct{ prefix string }

func (k keys) campaign(cid int64) string { return k.prefix + "{c" + strconv.FormatInt(cid, 10) + "}:" }

func (k keys) budget(cid int64) string  { return k.campaign(cid) + "budget" }
func (k keys) pending(cid int64) string { return k.campaign(cid) + "pending" }

// recent holds reservations confirmed within recentWindow, which a reload
// still counts as taken (see coupon_load.lua).
func (k keys) recent(cid int64) string   { return k.campaign(cid) + "recent" }
func (k keys) loadLock(cid int64) string { return k.campaign(cid) + "loadlock" }

func (k keys) template(cid, tid int64) string {
	return k.campaign(cid) + "t:" + strconv.FormatInt(tid, 10)
}
func (k keys) free(cid, tid int64) string  { return k.template(cid, tid) + ":free" }
func (k keys) users(cid, tid int64) string { return k.template(cid, tid) + ":users" }

// rule is a template's claim rule (see claimRule), which coupon_deduct.lua
// checks on every claim.
func (k keys) rule(cid, tid int64) string { return k.template(cid, tid) + ":rule" }

// idem is the idempotency key of a claim. Keys are scoped to the campaign so
// that the claim script touches one slot; the database's unique request_id
// catches the same key reused across campaigns.
func (k keys) idem(cid int64, requestID string) string { return k.campaign(cid) + "idem:" + requestID }

// couponLock is the redislock mutex of one coupon (redeem, refund, revoke).
func (k keys) couponLock(cid, couponID int64) string {
	return k.campaign(cid) + "lock:" + strconv.FormatInt(couponID, 10)
}

// returned marks a coupon whose slot went back to the pool (coupon_return.lua).
func (k keys) returned(cid, couponID int64) string {
	return k.campaign(cid) + "ret:" + strconv.FormatInt(couponID, 10)
}

// claimKeys are the six keys of coupon_release.lua, the first six of
// coupon_deduct.lua.
func (k keys) claimKeys(cid, tid int64, requestID string) []string {
	return []string{k.budget(cid), k.template(cid, tid), k.free(cid, tid), k.users(cid, tid),
		k.idem(cid, requestID), k.pending(cid)}
}

// deductKeys are the seven keys of coupon_deduct.lua: claimKeys and the
// template's claim rule.
func (k keys) deductKeys(cid, tid int64, requestID string) []string {
	tpl := k.template(cid, tid)
	return []string{k.budget(cid), tpl, tpl + ":free", tpl + ":users", k.idem(cid, requestID), k.pending(cid),
		tpl + ":rule"}
}

// recentWindow is how long a confirmed reservation still counts as in flight
// for a reload: far longer than a reload's read of the database takes.
const recentWindow = time.Minute
