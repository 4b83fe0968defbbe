package models

// Result is one row of the result table (docs/result-codes.md): a word an
// answer's "result" may carry, the code beside it, the HTTP status it is
// answered with and what it means.
type Result struct {
	Code Code
	Word string
	// Status is the HTTP status of the word; Also lists the other statuses it
	// is answered with, in the cases Meaning names.
	Status int
	Also   []int
	// RetryAfter is the Retry-After header the answer carries, but where
	// Meaning says otherwise: "1" (one second), "n" (the seconds the limit
	// says) or "" (none). The error sets it (Error.RetryAfterSeconds).
	RetryAfter string
	Meaning    string
}

// Statuses returns Status and then Also.
func (r Result) Statuses() []int { return append([]int{r.Status}, r.Also...) }

// Results is the result table. The first row of a code gives the word and the
// status of its errors (Code.Word, Code.Status); code 0 has a word per kind of
// success, code 14 the word forbidden beside unauthorized (Error.Forbidden).
var Results = []Result{
	{Code: CodeOK, Word: "ok", Status: 200, Also: []int{201, 202},
		Meaning: "any other success; 201 when something was created, 202 when a job was queued"},
	{Code: CodeOK, Word: "claimed", Status: 201, Meaning: "a claim created a coupon"},
	{Code: CodeOK, Word: "redeemed", Status: 200, Meaning: "a redemption was done, or a hold confirmed"},
	{Code: CodeOK, Word: "refunded", Status: 200, Meaning: "a refund or a partial return was done"},
	{Code: CodeOK, Word: "held", Status: 201, Meaning: "a hold keeps the order's coupons for it"},
	{Code: CodeOK, Word: "released", Status: 200, Meaning: "a hold was released"},
	{Code: CodeDuplicate, Word: "duplicate", Status: 200, Meaning: "a replay of something already done, answered with the first answer"},
	{Code: CodeSoldOut, Word: "sold_out", Status: 409, Meaning: "the template has no stock left"},
	{Code: CodeInvalidRequest, Word: "invalid_request", Status: 400, Also: []int{413, 415, 405},
		Meaning: "a field, header, parameter or body is missing, malformed or out of range; 413 a body over its limit, 415 a body of another media type, 405 a method the path does not take"},
	{Code: CodeUserLimitReached, Word: "user_limit_reached", Status: 409, Meaning: "the user holds per_user_limit coupons of the template"},
	{Code: CodeBudgetExhausted, Word: "budget_exhausted", Status: 409, Meaning: "the campaign's budget left is below one coupon's value, or a new budget is below what its coupons have taken"},
	{Code: CodeNotClaimable, Word: "not_claimable", Status: 409, Meaning: "the template or its campaign is paused or archived, or outside its claim window"},
	{Code: CodeAlreadyUsed, Word: "already_used", Status: 409, Meaning: "the coupon is already used (by another order, when redeeming)"},
	{Code: CodeNotValidNow, Word: "not_valid_now", Status: 409, Meaning: "the coupon is expired or not yet valid"},
	{Code: CodeBelowMinimum, Word: "below_minimum", Status: 422, Meaning: "the order amount is below the template's minimum"},
	{Code: CodeNotFound, Word: "not_found", Status: 404, Meaning: "no such template, campaign, coupon, token, job, endpoint or path"},
	{Code: CodeBusy, Word: "busy", Status: 429, RetryAfter: "1", Meaning: "the coupon's lock stayed held, or the coupon kept changing"},
	{Code: CodeIdempotencyMismatch, Word: "idempotency_mismatch", Status: 422, Meaning: "a key, order or return was used before with other values"},
	{Code: CodeNotRedeemed, Word: "not_redeemed", Status: 409, Meaning: "the order does not hold the coupon, or has no redeemed coupons"},
	{Code: CodeUnauthorized, Word: "unauthorized", Status: 401, Meaning: "no, malformed, unknown or revoked credentials where a role is needed"},
	{Code: CodeUnauthorized, Word: "forbidden", Status: 403, Meaning: "the wrong role, or someone else's coupon or user"},
	{Code: CodeUnavailable, Word: "unavailable", Status: 503, RetryAfter: "1", Meaning: "Redis or the database cannot be reached, or the instance sheds load; a report past its time budget (without Retry-After)"},
	{Code: CodeRateLimited, Word: "rate_limited", Status: 429, RetryAfter: "n", Meaning: "too many requests a minute from one user, caller or address"},
	{Code: CodeRevoked, Word: "revoked", Status: 409, Meaning: "the coupon was revoked"},
	{Code: CodeInProgress, Word: "in_progress", Status: 409, RetryAfter: "1", Meaning: "the first request with this Idempotency-Key has not written its coupon yet"},
	{Code: CodeHeld, Word: "held", Status: 409, Meaning: "the coupon is held by another order"},
	{Code: CodeNotCombinable, Word: "not_combinable", Status: 409, Meaning: "the order's coupons cannot share it with this one, or it would discount nothing"},
	{Code: CodeHoldExpired, Word: "hold_expired", Status: 409, Meaning: "the hold expired and some of its coupons are no longer free or valid"},
	{Code: CodeReturnExceedsOrder, Word: "return_exceeds_order", Status: 422, Meaning: "the order's returns would sum over its amount"},
	{Code: CodeCurrencyMismatch, Word: "currency_mismatch", Status: 422, Meaning: "the coupon is of another currency than the cart"},
	{Code: CodeInUse, Word: "in_use", Status: 409, Meaning: "a delete of a template or campaign that issued coupons (or has templates, or a claim or code job under way); archive it instead"},
	{Code: CodeConditionNotMet, Word: "condition_not_met", Status: 422, Meaning: "the cart does not hold what the coupon's condition asks (so many items or so much of the lines it names)"},
	{Code: CodeNotEligible, Word: "not_eligible", Status: 409, Meaning: "the customer, order, channel or time does not meet the template's eligibility rule (docs/eligibility.md)"},
	{Code: CodeCampaignLimit, Word: "campaign_limit", Status: 409, Meaning: "the user holds per_customer_limit coupons of the campaign, across its templates"},
	{Code: CodeInternal, Word: "internal", Status: 500, Meaning: "a bug, logged with its cause; the body says only \"internal error\""},
}

// codeResults is the first row of each code of Results.
var codeResults = func() map[Code]Result {
	m := map[Code]Result{}
	for _, r := range Results {
		if _, ok := m[r.Code]; !ok {
			m[r.Code] = r
		}
	}
	return m
}()

// internalResult answers a code that has no row: a bug.
var internalResult = codeResults[CodeInternal]

// wordForbidden is the word of a CodeUnauthorized error that is Forbidden.
const wordForbidden = "forbidden"

// forbiddenResult is the row of a Forbidden error.
var forbiddenResult = func() Result {
	for _, r := range Results {
		if r.Code == CodeUnauthorized && r.Word == wordForbidden {
			return r
		}
	}
	panic("couponsvc: the result table has no forbidden row") // a bug caught by any test
}()

// Result returns the code's row of the result table: the row of CodeInternal
// for a code that has none.
func (c Code) Result() Result {
	if r, ok := codeResults[c]; ok {
		return r
	}
	return internalResult
}

// Status returns the HTTP status of an error with the code.
func (c Code) Status() int { return c.Result().Status }

// Result returns the row an error answers with: forbidden for a Forbidden
// CodeUnauthorized, else its code's.
func (e *Error) Result() Result {
	if e.Code == CodeUnauthorized && e.Forbidden {
		return forbiddenResult
	}
	return e.Code.Result()
}
