package api

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/codes"
	"github.com/couponsvc/couponsvc/services/events"
	"github.com/couponsvc/couponsvc/services/reports"
)

// Routes is the table of the operational endpoints and the JSON API: every
// endpoint is one row, and the router (handlers.NewRouter), the role checks
// and the OpenAPI document are all made from these rows, so that they cannot
// disagree.
//
// Adding an endpoint is one row and a handler: write the handler (a method of
// *Server taking *gin.Context), its request struct with json tags (doc:"..."
// for the description, binding:"required" for a field that must be present:
// the decoder refuses a body without it), its answer struct (answers.go; the
// handler sends it with web.Respond, which refuses another type), and add a
// row below naming the method, path, roles, handler, request type, answer
// type, success status and result words, and the error result words the
// handler answers besides those every route shares (see web.Route.Errors).
// TestRouteOneRowIsAnEndpoint (handlers/routes_internal_test.go) does just
// that. TestOpenAPIMatchesRouter, TestOpenAPIRequestBodies and
// TestSecurityMatrix then check the new endpoint; the last one wants a row of
// fixtures (the URL and body to call it with) in handlers/security_test.go
// when it has a path parameter or a body.
//
// The rows may be made from a nil *Server (handlers.RouteTable does, for the
// tests): a handler is only called on the router's own Server.
func (s *Server) Routes() []web.Route {
	admin := web.Roles(models.RoleAdmin)
	return []web.Route{
		// Operations.
		{Method: "GET", Path: "/healthz", Handler: s.healthz,
			Tag: "operations", Summary: "The process is up", Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[web.NoPayload]()},
		{Method: "GET", Path: "/readyz", Handler: s.readyz,
			Tag: "operations", Summary: "The database and Redis answer", Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[web.NoPayload](),
			Errors: map[int][]string{503: {web.ErrDown}}},
		{Method: "GET", Path: "/metrics", Handler: s.serveMetrics,
			Tag: "operations", Summary: "Prometheus metrics (text exposition format)",
			Status: 200, Raw: &web.RawAnswer{MediaType: "text/plain", Schema: map[string]any{"type": "string"}}},

		// Campaigns and templates.
		{Method: "POST", Path: "/api/v1/campaigns", Roles: admin, Handler: s.createCampaign,
			Tag: "campaigns", Summary: "Create a campaign", Request: web.TypeOf[createCampaignRequest](), Status: 201, Results: []string{"ok"}, Answer: web.TypeOf[campaignAnswer]()},
		{Method: "GET", Path: "/api/v1/campaigns", Roles: admin, Query: pageParams, Handler: s.listCampaigns,
			Tag: "campaigns", Summary: "List the campaigns",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[campaignsAnswer]()},
		{Method: "GET", Path: "/api/v1/campaigns/:id", Roles: admin, Handler: s.getCampaign,
			Tag: "campaigns", Summary: "Show a campaign",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[campaignAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "POST", Path: "/api/v1/templates", Roles: admin, Handler: s.createTemplate,
			Tag: "campaigns", Summary: "Create a coupon template", Request: web.TypeOf[createTemplateRequest](), Status: 201, Results: []string{"ok"}, Answer: web.TypeOf[templateAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "GET", Path: "/api/v1/templates", Handler: s.listTemplates,
			Tag: "campaigns", Summary: "List the templates on offer, with the stock left",
			Description: "Anyone, also anonymous, sees the templates on offer: active, claims open now, coupons still valid " +
				"(sold out ones included); with all=1 an admin sees every template.",
			Query: append([]web.Param{{Name: "all", Description: "1: every template, also paused, not yet open or closed ones (admin only)",
				Schema: map[string]any{"type": "string", "enum": []string{"1"}}}}, pageParams...),
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[templatesAnswer](),
			Errors: map[int][]string{403: {web.ErrForb}}},
		{Method: "GET", Path: "/api/v1/templates/:id", Handler: s.getTemplate,
			Tag: "campaigns", Summary: "Show a template with the stock left",
			Description: "Admins see every template; anyone else only one the list shows them, and 404 for another.",
			Status:      200, Results: []string{"ok"}, Answer: web.TypeOf[templateStockAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "PATCH", Path: "/api/v1/campaigns/:id", Roles: admin, Handler: s.updateCampaign,
			Tag: "campaigns", Summary: "Rename, pause or resume a campaign, or change its budget",
			Description: "A paused campaign's templates refuse claims with not_claimable (\"this coupon's campaign is paused\") " +
				"whatever their own status, on every instance from the answer on; resuming gives each template its own state back. " +
				"A new budget_cents takes effect on every instance from the answer on; one below what the campaign's coupons have " +
				"taken (reservations in flight included) is refused with budget_exhausted and changes nothing. Audited.",
			Request: web.TypeOf[updateCampaignRequest](), Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[campaignAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"budget_exhausted"}}},
		{Method: "PATCH", Path: "/api/v1/templates/:id", Roles: admin, Handler: s.updateTemplate,
			Tag: "campaigns", Summary: "Change a template's name, description, claim window, status or code mode",
			Description: "status archived is final: the template takes no claims and no other change but its name and " +
				"description, and its shared code is free for another template (audited as template.archive).",
			Request: web.TypeOf[updateTemplateRequest](), Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[templateAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "DELETE", Path: "/api/v1/templates/:id", Roles: admin, Handler: s.deleteTemplate,
			Tag: "campaigns", Summary: "Delete a template that never issued a coupon",
			Description: "Refused with in_use when the template has any coupon (claimed, generated, imported or claimed by its " +
				"shared code), a code job, or a claim under way: archive it instead. Claims racing the delete are refused " +
				"(not_claimable, then not_found) or make it refuse; never a coupon of a deleted template. Audited (template.delete).",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[web.NoPayload](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"in_use"}}},
		{Method: "DELETE", Path: "/api/v1/campaigns/:id", Roles: admin, Handler: s.deleteCampaign,
			Tag: "campaigns", Summary: "Delete a campaign without templates",
			Description: "Refused with in_use while the campaign has templates: delete those that never issued a coupon first, " +
				"or archive them. Audited (campaign.delete).",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[web.NoPayload](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"in_use"}}},
		{Method: "POST", Path: "/api/v1/templates/:id/stock", Roles: admin, Handler: s.addStock,
			Tag: "campaigns", Summary: "Add stock to a template", Request: web.TypeOf[addStockRequest](), Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[templateAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "GET", Path: "/api/v1/templates/:id/stats", Roles: admin, Handler: s.templateStats,
			Tag: "campaigns", Summary: "A template's figures and its activity per hour",
			Query: []web.Param{{Name: "hours", Description: "how many hours of activity (default 24)",
				Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": reports.MaxStatsHours}}},
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[statsAnswer](),
			Errors: map[int][]string{400: {web.ErrBody}, 404: {web.ErrFound}}},

		// Bulk codes, import, export, issue to a list, jobs (docs/jobs.md).
		{Method: "POST", Path: "/api/v1/templates/:id/codes", Roles: admin, Handler: s.generateCodes,
			Tag: "jobs", Summary: "Make bearer codes in bulk (a job)",
			Description: "Queues a job making count bearer coupons (no user until one holds or redeems it), counted " +
				"against stock and budget now: more than is left → 409. A pattern keeps at least 40 bits of randomness " +
				"(8 #), else 400 naming pattern. Poll the job; its result CSV lists the codes.",
			Request: web.TypeOf[generateRequest](), Status: 202, Results: []string{"ok"}, Answer: web.TypeOf[jobAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"sold_out", "budget_exhausted", "not_claimable"}}},
		{Method: "POST", Path: "/api/v1/templates/:id/codes/import", Roles: admin, Handler: s.importCodes,
			Tag: "jobs", Summary: "Import codes from a CSV file (a job)",
			Description: "A text/csv body of up to 50 MiB: a header with a code column and an optional user_id column, " +
				"then a code a row. Queues a job; its result CSV (line,code,reason) lists each refused row: " +
				"bad_characters, duplicate_in_file, already_exists, over_stock, bad_user_id, or a claim's refusal " +
				"for a row with a user_id (user_limit_reached, budget_exhausted, not_claimable).",
			RawRequest: &web.RawAnswer{MediaType: "text/csv", Schema: map[string]any{"type": "string"}},
			MaxBody:    codes.MaxImportBytes,
			Status:     202, Results: []string{"ok"}, Answer: web.TypeOf[jobAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"not_claimable"}}},
		{Method: "POST", Path: "/api/v1/templates/:id/issue", Roles: admin, Handler: s.issueCoupons,
			Tag: "jobs", Summary: "Give a coupon to each user of a list (a job)",
			Description: "JSON {user_ids} (1 to 100,000) or a text/csv body (a user_id column, or a user id a line). " +
				"Each user gets a coupon through the claim path (stock, budget, limit), at most once per job even " +
				"when the job is resumed. The result CSV is user_id,result,coupon_code.",
			Request:    web.TypeOf[issueRequest](),
			RawRequest: &web.RawAnswer{MediaType: "text/csv", Schema: map[string]any{"type": "string"}},
			MaxBody:    maxIssueBody,
			Status:     202, Results: []string{"ok"}, Answer: web.TypeOf[jobAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"not_claimable"}}},
		{Method: "GET", Path: "/api/v1/templates/:id/coupons.csv", Roles: admin, Handler: s.exportCoupons,
			Tag: "jobs", Summary: "Export a template's coupons as CSV (streamed)",
			Description: "Every coupon of the template, in id order, streamed in constant memory: " +
				codes.ExportHeader + ". status is an effective status; from and to bound claimed_at.",
			Query:   couponFilterParams(),
			Streams: true,
			Status:  200, Raw: &web.RawAnswer{MediaType: "text/csv", Schema: map[string]any{"type": "string"}},
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "GET", Path: "/api/v1/templates/:id/coupons", Roles: admin, Handler: s.listTemplateCoupons,
			Tag: "jobs", Summary: "List a template's coupons (a cursor page)",
			Description: "The template's coupons in increasing id, paged by after (docs/paging.md), each with its effective " +
				"status (an issued coupon past valid_until is expired); the filters are the CSV export's.",
			Query:  append(couponFilterParams(), pageParams...),
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[couponsAnswer](),
			Errors: map[int][]string{400: {web.ErrBody}, 404: {web.ErrFound}}},
		{Method: "GET", Path: "/api/v1/jobs/:id", Roles: admin, Handler: s.getJob,
			Tag: "jobs", Summary: "A job's state and progress",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[jobAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "GET", Path: "/api/v1/jobs/:id/result.csv", Roles: admin, Handler: s.downloadJobResult,
			Tag: "jobs", Summary: "A job's result CSV",
			Description: "generate: code; import: line,code,reason (the refused rows); issue: user_id,result,coupon_code.",
			Streams:     true,
			Status:      200, Raw: &web.RawAnswer{MediaType: "text/csv", Schema: map[string]any{"type": "string"}},
			Errors: map[int][]string{404: {web.ErrFound}}},

		// Claims.
		{Method: "POST", Path: "/api/v1/templates/:id/claim", Roles: web.Roles(models.RoleApp, models.RoleShopper),
			Guard: s.admitClaim, Handler: s.claimCoupon,
			Tag: "claims", Summary: "Claim a coupon",
			Description: "An app token names the user in the body; a shopper's session claims for the shopper (body optional). " +
				"The Idempotency-Key header (1-128 printable ASCII) makes a retry answer 200 duplicate with the first coupon.",
			Request: web.TypeOf[claimRequest](),
			Header: []web.Param{{Name: "Idempotency-Key", Required: true,
				Description: "1-128 printable ASCII; a retry with the same key answers the first result",
				Schema:      web.IdempotencyKeySchema()}},
			Status: 201, Results: []string{"claimed"}, Duplicate200: true, OwnIdempotencyKey: true, Answer: web.TypeOf[claimAnswer](),
			Errors: map[int][]string{404: {web.ErrFound},
				409: {"sold_out", "user_limit_reached", "budget_exhausted", "not_claimable", "in_progress"},
				422: {"idempotency_mismatch"}, 429: {"rate_limited"}}},

		// Checkout.
		{Method: "POST", Path: "/api/v1/redemptions", Roles: web.Roles(models.RoleCashier, models.RoleApp),
			Handler: s.redeemCoupon, Tag: "checkout", Summary: "Redeem a coupon on an order",
			Description: "Uses the coupon on the order and answers the discount and the amount to pay. The same coupon and " +
				"order again answers 200 duplicate with the first answer (its amounts, whatever amount the retry carried). " +
				"With user_id the coupon must belong to that user (403 forbidden otherwise). A coupon whose redemption " +
				"by an order was refunded may be redeemed again, by that order or another. A coupon held by an online " +
				"order → 409 held; a coupon the order's others cannot share it with (stacking), or that would discount nothing " +
				"(the order's coupons already discount all of it) → 409 not_combinable. An order has one amount: another " +
				"order_amount_cents than its first redemption's or hold's → 422 idempotency_mismatch. A shared code claims a coupon of its " +
				"template for the user through the claim script (stock, budget, limit) and uses it at once; without user_id " +
				"the shopper is anonymous (stock and budget, no per-user limit; the coupon has no owner); the same code, user " +
				"(or none) and order again → 200 duplicate. A bearer coupon redeemed with a " +
				"user_id becomes that user's; without one it stays anonymous. With lines (a cart, docs/checkout.md) the answer " +
				"gives the coupon's part of each line and of the shipping, stored with the redemption; on an order that carries " +
				"coupons it is priced on what they left of each line. Another cart than the order's → 422 idempotency_mismatch naming lines. " +
				"On the order's first checkout the live automatic offers that join its cart are taken with the code, as a hold takes them; " +
				"the answer is still the code's coupon and its discount, payable_cents what the order pays after every coupon on it.",
			Request: web.TypeOf[redeemRequest](), Status: 200, Results: []string{"redeemed", "duplicate"}, Answer: web.TypeOf[redeemAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"already_used", "revoked", "not_valid_now", "held", "not_combinable",
				"sold_out", "user_limit_reached", "budget_exhausted", "not_claimable", "in_progress", "not_eligible"},
				422: {"below_minimum", "idempotency_mismatch", "currency_mismatch", "condition_not_met"}, 429: {"busy"}}},
		{Method: "POST", Path: "/api/v1/refunds", Roles: web.Roles(models.RoleCashier, models.RoleApp),
			Handler: s.refundCoupon, Tag: "checkout", Summary: "Refund a coupon's use by a cancelled order",
			Description: "Restore policy: the coupon is issued again to its holder (with extend_on_refund its validity moves " +
				"forward by the time the order held it; without it, a coupon that expired meanwhile comes back expired). " +
				"Recycle policy: the coupon is revoked and its stock, budget and the holder's limit go back to the pool " +
				"(stock_returned). Again → 200 duplicate. A partial return (return_id) again with another amount → 422 idempotency_mismatch. " +
				"An order redeemed with a cart is returned by lines (return_id and lines): each line's units come back at what was " +
				"paid for them (refund_cents), their stored discount goes back to the campaigns (discount_cents); units over a line's → " +
				"422 return_exceeds_order naming the line; the return that completes the order gives back the shipping's discount " +
				"and refunds its coupons by policy (docs/returns.md). A return by lines while the order's hold is pending → 409 held.",
			Request: web.TypeOf[refundRequest](), Status: 200, Results: []string{"refunded", "duplicate"}, Answer: web.TypeOf[refundAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"not_redeemed", "held"}, 422: {"return_exceeds_order", "idempotency_mismatch"}, 429: {"busy"}}},
		{Method: "POST", Path: "/api/v1/checkout/validate", Roles: web.Roles(models.RoleCashier, models.RoleApp, models.RoleShopper),
			DryRun: true, Handler: s.validateCheckout, Tag: "checkout", Summary: "Price a cart of coupons for an order (a dry run)",
			Description: "Applies every rule of a hold (owner, state, validity, minimum, stacking) to 1-5 codes and prices them; " +
				"changes nothing. result is ok or the word the hold would answer; each coupon has its own word, and a refusal " +
				"(stacking included) is named on the line of each coupon it concerns. Every refusal of a code is answered so, as 200: " +
				"a code no coupon has, a mistyped one (with a user_id or without) and, with a user_id, another user's coupon are " +
				"word for word the same not_found line (result not_found), so that validation is no oracle of codes; the 4xx " +
				"refusals are hold's and redeem's. A shopper's session validates only its own " +
				"coupons (user_id is the shopper's). Each code counts against the caller's and the user's validation limits (429 rate_limited). " +
				"With lines the answer gives each line's discount and each coupon's part of it, and the shipping's discount. " +
				"With choose best it answers, priced as above, the set of the codes and (with user_id) the user's own usable coupons " +
				"that the stacking rules allow and that takes the most off the order (ties: fewer coupons, then the earlier codes), " +
				"and left_out: every other coupon weighed, with its reason (refused, not_combinable, not_best, not_considered) and message.",
			Request: web.TypeOf[validateRequest](), Status: 200,
			Results: []string{"ok", "held", "already_used", "revoked", "not_valid_now", "below_minimum", "condition_not_met", "not_combinable",
				"sold_out", "user_limit_reached", "budget_exhausted", "not_claimable", "currency_mismatch", "not_found", "not_eligible"},
			Answer: web.TypeOf[checkoutAnswer](),
			Errors: map[int][]string{429: {"rate_limited"}}},
		{Method: "POST", Path: "/api/v1/holds", Roles: web.Roles(models.RoleCashier, models.RoleApp),
			Handler: s.holdCoupons, Tag: "checkout", Summary: "Hold coupons for an order while it is paid",
			Description: "All the codes are held for the order until expires_at, or none. A shared code claims a coupon of " +
				"its template for the user (without user_id, for an anonymous shopper: no per-user limit) inside the hold " +
				"(stock, budget, limit, idempotency keyed on template, user and order); a release, an expiry or a failed confirm gives the claim back. The same order with the same codes " +
				"and amount again → 200 duplicate with the first answer (expires_at unchanged); other codes or amount while " +
				"held → 422 idempotency_mismatch (release first). With lines the allocation per line is stored with the hold " +
				"and confirmed as it is; the order keeps its cart: another cart → 422 idempotency_mismatch naming lines.",
			Request: web.TypeOf[holdRequest](), Status: 201, Results: []string{"held"}, Duplicate200: true,
			Answer: web.TypeOf[checkoutAnswer](),
			Errors: map[int][]string{404: {web.ErrFound},
				409: {"held", "not_combinable", "already_used", "revoked", "not_valid_now",
					"sold_out", "user_limit_reached", "budget_exhausted", "not_claimable", "in_progress", "not_eligible"},
				422: {"below_minimum", "idempotency_mismatch", "currency_mismatch", "condition_not_met"}, 429: {"busy"}}},
		{Method: "GET", Path: "/api/v1/holds/:order_id", Roles: web.Roles(models.RoleCashier, models.RoleApp),
			Handler: s.getHold, Tag: "checkout", Summary: "Show an order's hold",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[checkoutAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "POST", Path: "/api/v1/holds/:order_id/confirm", Roles: web.Roles(models.RoleCashier, models.RoleApp),
			Handler: s.confirmHold, Tag: "checkout", Summary: "Confirm an order's hold: its coupons are used",
			Description: "Every held coupon becomes used with its use log row, in one transaction. Again → 200 duplicate. " +
				"After the hold expired: when every coupon is still issued and valid they are taken again (late: true); " +
				"otherwise 409 hold_expired naming the coupons lost, and nothing is confirmed. The body is optional; a cart given " +
				"with lines must be the held one (422 idempotency_mismatch naming lines, nothing confirmed): the stored " +
				"allocation is confirmed, never priced again.",
			Request: web.TypeOf[confirmRequest](), OptionalBody: true, Status: 200, Results: []string{"redeemed", "duplicate"},
			Answer: web.TypeOf[checkoutAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"hold_expired", "not_combinable"},
				422: {"idempotency_mismatch"}, 429: {"busy"}}},
		{Method: "POST", Path: "/api/v1/holds/:order_id/release", Roles: web.Roles(models.RoleCashier, models.RoleApp),
			Handler: s.releaseHold, Tag: "checkout", Summary: "Release an order's hold: its coupons go back to their holders",
			Description: "Again, or after the hold expired → 200 duplicate; after confirm → 409 already_used (refund instead).",
			Status:      200, Results: []string{"released", "duplicate"}, Answer: web.TypeOf[releaseAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"already_used"}, 429: {"busy"}}},

		// Events and webhooks (docs/events.md).
		{Method: "GET", Path: "/api/v1/events", Roles: web.Roles(models.RoleAdmin, models.RoleApp), Handler: s.listEvents,
			Tag: "events", Summary: "The pull feed: the events after an id, oldest first",
			Description: "Read on with after=next. An event shows once every lower id has committed or is known never to " +
				"(a rolled back change), so that a reader never skips one (docs/events.md).",
			Query: []web.Param{
				{Name: "after", Description: "the last event id read (0: from the oldest kept)", Schema: afterSchema},
				{Name: "from", Description: "latest: start from now (without after: 400 with it): no events, and next the id to read on from " +
					"(the events committed after this call come after it)",
					Schema: map[string]any{"type": "string", "enum": []string{"latest"}}},
				{Name: "limit", Description: "at most this many events (default 100)", Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": events.MaxFeedLimit}}},
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[eventsAnswer](),
			Errors: map[int][]string{400: {web.ErrBody}}},
		{Method: "POST", Path: "/api/v1/webhooks", Roles: admin, Handler: s.createWebhook,
			Tag: "events", Summary: "Register a webhook endpoint",
			Description: "Each event of its types is POSTed to the URL, signed with the secret (Couponsvc-Signature), " +
				"and retried for at least 3 days until a 2xx answer (docs/events.md).",
			Request: web.TypeOf[createWebhookRequest](), Status: 201, Results: []string{"ok"}, Answer: web.TypeOf[webhookCreatedAnswer]()},
		{Method: "GET", Path: "/api/v1/webhooks", Roles: admin, Query: pageParams, Handler: s.listWebhooks,
			Tag: "events", Summary: "List the webhook endpoints (without their secrets)",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[endpointsAnswer]()},
		{Method: "GET", Path: "/api/v1/webhooks/:id", Roles: admin, Handler: s.getWebhook,
			Tag: "events", Summary: "Show a webhook endpoint",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[endpointAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "PATCH", Path: "/api/v1/webhooks/:id", Roles: admin, Handler: s.updateWebhook,
			Tag: "events", Summary: "Change a webhook endpoint, or enable it again",
			Request: web.TypeOf[updateWebhookRequest](), Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[endpointAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "DELETE", Path: "/api/v1/webhooks/:id", Roles: admin, Handler: s.deleteWebhook,
			Tag: "events", Summary: "Remove a webhook endpoint with its deliveries and their log",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[web.NoPayload](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "GET", Path: "/api/v1/webhooks/:id/attempts", Roles: admin, Handler: s.listWebhookAttempts,
			Tag: "events", Summary: "An endpoint's delivery log, newest first",
			Description: "Paged by after, newest first: a page holds the lines below after (docs/paging.md).",
			Query:       pageParams,
			Status:      200, Results: []string{"ok"}, Answer: web.TypeOf[attemptsAnswer](),
			Errors: map[int][]string{400: {web.ErrBody}, 404: {web.ErrFound}}},
		{Method: "POST", Path: "/api/v1/webhooks/:id/deliveries/:delivery_id/resend", Roles: admin, Handler: s.resendDelivery,
			Tag: "events", Summary: "Send a delivery again (the same event, the same id)",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[deliveryAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},

		// Coupons.
		{Method: "GET", Path: "/api/v1/coupons/:code", Roles: web.Roles(models.RoleCashier, models.RoleAdmin, models.RoleApp),
			Handler: s.getCoupon, Tag: "coupons", Summary: "Show a coupon and its template",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[couponAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "POST", Path: "/api/v1/coupons/:code/revoke", Roles: admin, Handler: s.revokeCoupon,
			Tag: "coupons", Summary: "Revoke a coupon",
			Description: "An issued (or expired) coupon is revoked, with an audit entry of who and why. With return_stock its " +
				"stock, budget and the holder's limit go back to the pool; without it the revoked coupon keeps counting " +
				"against both. A revoked coupon again → 409 revoked, saying when, by whom and why it was revoked (unless " +
				"it now asks for the stock back of a coupon revoked without it: 200 ok, the stock returned). A used " +
				"coupon → 409 already_used: refund its order first. Two reasons: public_reason, one of a fixed list, is " +
				"what the shopper's wallet says (\"Revoked: issued in error\"); reason is the admin's internal note, kept " +
				"in the audit log and never shown to the shopper.",
			Request: web.TypeOf[revokeRequest](), Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[revokeAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}, 409: {"already_used", "revoked"}, 429: {"busy"}}},
		{Method: "GET", Path: "/api/v1/users/:user_id/coupons", Roles: web.Roles(models.RoleApp, models.RoleAdmin, models.RoleShopper),
			Query: pageParams, Handler: s.listUserCoupons, Tag: "coupons", Summary: "List a user's coupons",
			Description: "Newest first (by id, paged by after), of the user's latest 1000, each with its effective status (an issued coupon past valid_until is " +
				"expired). A shopper sees only their own.",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[couponsAnswer]()},
		{Method: "GET", Path: "/api/v1/users/:user_id/coupons/usable", Roles: web.Roles(models.RoleApp, models.RoleAdmin, models.RoleShopper),
			Handler: s.usableCoupons, Tag: "coupons", Summary: "A user's coupons that apply to an order amount, best first",
			Description: "Each coupon with its discount alone, largest first, and best: the codes of the combination the " +
				"stacking rules allow with the largest total discount. With choose=best, best is the set the best-of search " +
				"chooses (docs/checkout.md) and left_out lists every other usable coupon with why. automatic lists the live " +
				"automatic offers a checkout of best would take, priced with it (docs/automatic-offers.md). A shopper sees only their own.",
			Query: []web.Param{{Name: "order_amount_cents", Required: true, Description: "the order's amount, before any discount",
				Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": models.MaxMoneyCents}},
				{Name: "choose", Description: "all (default) or best: the best-of search's set, with left_out",
					Schema: map[string]any{"type": "string", "enum": models.ChooseValues}}},
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[usableAnswer](),
			Errors: map[int][]string{400: {web.ErrBody}}},
		{Method: "POST", Path: "/api/v1/users/:user_id/coupons/usable", Roles: web.Roles(models.RoleApp, models.RoleAdmin, models.RoleShopper),
			Handler: s.priceUsableCoupons, Tag: "coupons", Summary: "A user's coupons that apply to a cart, best first",
			Description: "As the GET, for a cart given in the body (order_amount_cents, or lines with shipping and currency): " +
				"each coupon priced alone on the cart (its target, minimum and currency met), largest first, and best. " +
				"Changes nothing (a read: it takes no Idempotency-Key and keeps no answer). A shopper sees only their own.",
			DryRun: true, Request: web.TypeOf[usableRequest](), Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[usableAnswer]()},

		// Administration.
		{Method: "POST", Path: "/api/v1/tokens", Roles: admin, Handler: s.createToken,
			Tag: "admin", Summary: "Create an API token (shown once)", Request: web.TypeOf[createTokenRequest](), Status: 201, Results: []string{"ok"}, Answer: web.TypeOf[tokenCreatedAnswer]()},
		{Method: "GET", Path: "/api/v1/tokens", Roles: admin, Query: pageParams, Handler: s.listTokens,
			Tag: "admin", Summary: "List the API tokens (never their secrets), newest first (by id, paged by after)",
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[tokensAnswer]()},
		{Method: "POST", Path: "/api/v1/tokens/:id/revoke", Roles: admin, Handler: s.revokeToken,
			Tag: "admin", Summary: "Revoke an API token",
			Description: "The token stops working at once on this instance and within 5 seconds on the others, with an " +
				"audit entry. A revoked token again → 200 duplicate.",
			Status: 200, Results: []string{"ok", "duplicate"}, Answer: web.TypeOf[tokenAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
		{Method: "POST", Path: "/api/v1/users", Roles: admin, Handler: s.createUser,
			Tag: "admin", Summary: "Create a user of the pages", Request: web.TypeOf[createUserRequest](), Status: 201, Results: []string{"ok"}, Answer: web.TypeOf[userAnswer](),
			Errors: map[int][]string{400: {web.ErrBody}}},
		{Method: "GET", Path: "/api/v1/reports/redemptions.csv", Roles: admin, Handler: s.redemptionsCSV,
			Tag: "reports", Summary: "Redemptions and discounts by day, template and cashier, as CSV (streamed)",
			Description: "Days are days of the deployment's time zone (COUPON_TIMEZONE). A redemption counts on the day of its " +
				"use with its discount as it stands (a partial return lowers it); a refund counts on the day of the refund, " +
				"with the discount it took back, under the template and cashier of the redemption it undid. Columns: the " +
				"groupings (day as YYYY-MM-DD; template as template,template_name; cashier), then redemptions, " +
				"discount_cents, refunds, refunded_discount_cents, net_redemptions, net_discount_cents, currency. Only the " +
				"coupons of templates of the currency asked count (the deployment's by default), so that no sum adds two " +
				"currencies; every row names it. Rows are ordered by the groupings; groups without redemptions or " +
				"refunds have no row.",
			Query: []web.Param{
				{Name: "from", Description: "first day, YYYY-MM-DD in the deployment's zone (default: 29 days before to)",
					Schema: web.DateSchema()},
				{Name: "to", Description: fmt.Sprintf("last day, included (default: today); at most %d days from from", reports.MaxReportDays),
					Schema: web.DateSchema()},
				{Name: "group_by", Description: "a comma list of day, template and cashier, each at most once (default: day)",
					Schema: map[string]any{"type": "string", "pattern": groupByPattern()}},
				{Name: "currency", Description: "the coupons of templates of this currency (default: the deployment's): a report sums one currency",
					Schema: map[string]any{"type": "string", "minLength": 3, "maxLength": 3, "pattern": "^[A-Z]{3}$"}},
			},
			Status: 200, Raw: &web.RawAnswer{MediaType: "text/csv", Schema: map[string]any{"type": "string"}},
			Errors: map[int][]string{400: {web.ErrBody}}},
		{Method: "GET", Path: "/api/v1/reports/discounts", Roles: admin, Handler: s.showDiscounts,
			Tag: "reports", Summary: "Discount by SKU or by category, net of returns",
			Description: discountsDescription, Query: discountParams(),
			Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[discountsAnswer](),
			Errors: map[int][]string{400: {web.ErrBody}}},
		{Method: "GET", Path: "/api/v1/reports/discounts.csv", Roles: admin, Handler: s.discountsCSV,
			Tag: "reports", Summary: "Discount by SKU or by category, net of returns, as CSV",
			Description: discountsDescription + " Columns: sku or category, then " + strings.Join(discountColumns, ", ") + ".",
			Query:       discountParams(),
			Status:      200, Raw: &web.RawAnswer{MediaType: "text/csv", Schema: map[string]any{"type": "string"}},
			Errors: map[int][]string{400: {web.ErrBody}}},
		{Method: "POST", Path: "/api/v1/reconcile", Roles: admin, Handler: s.reconcileCounters,
			Tag: "admin", Summary: "Compare Redis with the database, and repair", Request: web.TypeOf[reconcileRequest](), Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[reconcileAnswer](),
			Errors: map[int][]string{404: {web.ErrFound}}},
	}
}

// couponFilterParams are the filters of a template's coupons, as a list
// and as the CSV export (codes.ExportFilter).
func couponFilterParams() []web.Param {
	return []web.Param{
		{Name: "status", Description: "issued, held, used, revoked or expired", Schema: map[string]any{"type": "string",
			"enum": []string{"issued", "held", "used", "revoked", "expired"}}},
		{Name: "from", Description: "claimed at or after (" + web.TimeRule + ")", Schema: web.TimeSchema()},
		{Name: "to", Description: "claimed before (" + web.TimeRule + ")", Schema: web.TimeSchema()}}
}
