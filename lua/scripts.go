// Package lua embeds the Redis scripts of couponsvc. Each script is one file
// whose header lists its KEYS, ARGV and every return code; all keys of one call
// share the campaign's hash tag so that the scripts run unchanged on Redis
// Cluster.
package lua

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

//go:embed coupon_deduct.lua
var deductSource string

//go:embed coupon_confirm.lua
var confirmSource string

//go:embed coupon_release.lua
var releaseSource string

//go:embed coupon_load.lua
var loadSource string

//go:embed coupon_return.lua
var returnSource string

//go:embed coupon_stock.lua
var stockSource string

//go:embed coupon_take.lua
var takeSource string

//go:embed coupon_budget.lua
var budgetSource string

// The scripts, run with EVALSHA; go-redis falls back to EVAL on NOSCRIPT.
var (
	// Deduct reserves a coupon: idempotency, claim rule, budget, stock,
	// per-user limit.
	Deduct = redis.NewScript(deductSource)
	// Confirm marks a reservation whose coupon row is written.
	Confirm = redis.NewScript(confirmSource)
	// Release gives back a reservation that will never be written.
	Release = redis.NewScript(releaseSource)
	// Load rebuilds a campaign's counters from the database.
	Load = redis.NewScript(loadSource)
	// Return gives a coupon's slot, budget and ordinal back to the pool.
	Return = redis.NewScript(returnSource)
	// AddStock adds stock to a template's loaded counters.
	AddStock = redis.NewScript(stockSource)
	// Take takes many slots at once for bearer coupons made in bulk.
	Take = redis.NewScript(takeSource)
	// Budget moves a campaign's budget counter by a change of its budget.
	Budget = redis.NewScript(budgetSource)
)

// Result codes of Budget (see coupon_budget.lua).
const (
	BudgetMoved     = 0
	BudgetBelowUsed = 1
	BudgetNotLoaded = 2
)

// Result codes of Deduct (see coupon_deduct.lua).
const (
	DeductReserved            = 0
	DeductDuplicate           = 1
	DeductSoldOut             = 2
	DeductBadArgs             = 3
	DeductUserLimit           = 4
	DeductBudgetExhausted     = 5
	DeductNotClaimable        = 6
	DeductCampaignLimit       = 7
	DeductIdempotencyMismatch = 12
	DeductNotLoaded           = 20
)

// Result codes of Take (see coupon_take.lua).
const (
	TakeDone      = 0
	TakeBadArgs   = 3
	TakeNotLoaded = 20
)

// Result codes of Return (see coupon_return.lua).
const (
	ReturnDone        = 1
	ReturnDuplicate   = 2
	ReturnNotLoaded   = 3
	ReturnAlreadyFree = 4
)
