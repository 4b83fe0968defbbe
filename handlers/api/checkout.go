package api

import (
	"net/http"
	"strconv"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

type validateRequest struct {
	OrderAmountCents *int64 `json:"order_amount_cents" schema:"order_amount" doc:"the order's amount, before any discount (required without lines)"`
	cartFields
	CouponCodes []string `json:"coupon_codes" binding:"required" schema:"coupon_codes" doc:"1 to maxItems codes, each once (maxItems: the deployment's COUPON_MAX_COUPONS_PER_ORDER, never under 5): coupon codes, or shared codes (checked as their claim would be, taking nothing)"`
	UserID      *string  `json:"user_id" schema:"user_id" doc:"every coupon must belong to this user (a bearer coupon would become theirs); a shared code without it is checked for an anonymous shopper (no per-user limit); a shopper's session is always its own user"`
	OrderID     *string  `json:"order_id" schema:"order_id" doc:"the order: a coupon it already holds applies"`
	Choose      *string  `json:"choose" schema:"choose" doc:"all (default): every code priced, as a hold would; best: the set of the codes and, with user_id, the user's own usable coupons that the stacking rules allow and that takes the most off the order, answered priced with left_out (docs/checkout.md)"`
}

type holdRequest struct {
	OrderID          *string `json:"order_id" binding:"required" schema:"order_id"`
	OrderAmountCents *int64  `json:"order_amount_cents" schema:"order_amount" doc:"the order's amount, before any discount (required without lines)"`
	cartFields
	CouponCodes []string `json:"coupon_codes" binding:"required" schema:"coupon_codes" doc:"1 to maxItems codes, each once (maxItems: the deployment's COUPON_MAX_COUPONS_PER_ORDER, never under 5): all are held or none; a shared code claims a coupon for user_id (without one, for an anonymous shopper), held with the others"`
	UserID      *string  `json:"user_id" schema:"user_id" doc:"every coupon must belong to this user (403 forbidden otherwise); a bearer coupon becomes theirs; optional with a shared code: without it the claim is an anonymous shopper's (stock and budget, no per-user limit)"`
	TTLSeconds  *int     `json:"ttl_seconds" schema:"hold_ttl" doc:"how long the hold lasts: 5 to 86400 seconds (default 900); a hold never lasts past the earliest valid_until of its coupons (expires_at says when it ends)"`
}

type confirmRequest struct {
	OrderAmountCents *int64     `json:"order_amount_cents" schema:"order_amount" doc:"when given, must equal the held amount (422 idempotency_mismatch otherwise)"`
	Currency         *string    `json:"currency" schema:"currency" doc:"the cart's currency (ISO 4217); default the deployment's; a coupon of another currency is refused currency_mismatch"`
	Lines            []cartLine `json:"lines" schema:"cart_lines" doc:"when given, the held cart's lines (with its currency and shipping): another cart is 422 idempotency_mismatch naming lines, and nothing is confirmed; the stored allocation is confirmed, never priced again"`
	ShippingCents    *int64     `json:"shipping_cents" schema:"shipping" doc:"the shipping amount of a cart with lines (default 0)"`
}

// usableRequest is the order a user's usable coupons are priced on.
type usableRequest struct {
	OrderAmountCents *int64 `json:"order_amount_cents" schema:"order_amount" doc:"the order's amount, before any discount (required without lines)"`
	cartFields
	Choose *string `json:"choose" schema:"choose" doc:"all (default): best is the best coupon of each template, combined; best: best is the set the best-of search chooses, with left_out (docs/checkout.md)"`
}

// checkoutAnswer is the payload of validate, hold, a hold's state and confirm.
type checkoutAnswer struct {
	OrderID          string                    `json:"order_id,omitempty"`
	State            string                    `json:"state,omitempty" doc:"the hold: held, confirmed, released or expired"`
	Late             bool                      `json:"late" doc:"confirmed after the hold expired, the coupons being still free"`
	ExpiresAt        *string                   `json:"expires_at,omitempty" format:"date-time" doc:"when the hold ends (RFC 3339, UTC)"`
	Coupons          []checkout.CheckoutCoupon `json:"coupons"`
	OrderAmountCents int64                     `json:"order_amount_cents"`
	DiscountCents    int64                     `json:"discount_cents" doc:"the coupons' discounts together (docs/pricing.md)"`
	PayableCents     int64                     `json:"payable_cents" doc:"order amount − discount"`
	cartAnswer
	LeftOut []checkout.LeftOutCoupon `json:"left_out,omitempty" doc:"validate with choose best: every coupon weighed and left out, with why, in the order of the codes"`
	// AutomaticNotApplied is the service's answer as it is (docs/automatic-offers.md).
	AutomaticNotApplied []checkout.OfferNotApplied `json:"automatic_not_applied,omitempty" doc:"validate: every live automatic offer of the cart's currency that does not join the cart, with why, in the offers' order; absent when none is left out"`
}

// releaseAnswer is a release's answer: the hold released, or nothing when
// there was none to show.
type releaseAnswer struct {
	*checkoutAnswer
}

// checkoutPayload is the payload of a checkout answer.
func checkoutPayload(r *checkout.CheckoutResult) checkoutAnswer {
	h := checkoutAnswer{OrderID: r.OrderID, State: r.State, Late: r.Late, Coupons: r.Coupons,
		OrderAmountCents: r.OrderAmountCents, DiscountCents: r.DiscountCents, PayableCents: r.PayableCents,
		cartAnswer: cartAnswer{Currency: r.Currency, Lines: r.Lines, ShippingDiscountCents: r.ShippingDiscountCents}, LeftOut: r.LeftOut,
		AutomaticNotApplied: r.AutomaticNotApplied}
	if r.Coupons == nil {
		h.Coupons = []checkout.CheckoutCoupon{}
	}
	if r.ExpiresAt != nil {
		at := web.FormatTime(*r.ExpiresAt)
		h.ExpiresAt = &at
	}
	return h
}

// optionalUserID reads an optional user_id: given but empty is a mistake,
// not "no owner check".
func optionalUserID(p *string) (string, error) {
	if p == nil {
		return "", nil
	}
	if *p == "" {
		return "", models.Invalid("user_id", "must be 1 to 64 characters (or left out)")
	}
	return *p, nil
}

// checkoutBody is a validation's or a hold's request: what both send alike.
type checkoutBody interface {
	checkoutFields() (user *string, amount *int64, cart *cartFields, codes []string)
}

func (r *validateRequest) checkoutFields() (*string, *int64, *cartFields, []string) {
	return r.UserID, r.OrderAmountCents, &r.cartFields, r.CouponCodes
}

func (r *holdRequest) checkoutFields() (*string, *int64, *cartFields, []string) {
	return r.UserID, r.OrderAmountCents, &r.cartFields, r.CouponCodes
}

// bindCheckout binds a validation's or a hold's body into req and reads what
// both send alike: the user (a shopper's session, which only validate
// admits, is always its own user), the order's amount and cart, and the
// codes. It answers the error itself and reports false on one.
func bindCheckout(c *gin.Context, req checkoutBody) (checkout.CheckoutRequest, bool) {
	if !web.BindJSON(c, req) {
		return checkout.CheckoutRequest{}, false
	}
	user, amount, cart, codes := req.checkoutFields()
	sr, err := checkoutRequest(web.Principal(c), user, amount, cart, codes)
	if err != nil {
		web.RespondError(c, err)
		return checkout.CheckoutRequest{}, false
	}
	return sr, true
}

func checkoutRequest(p *models.Principal, user *string, amount *int64, cart *cartFields, codes []string) (checkout.CheckoutRequest, error) {
	userID, err := optionalUserID(user)
	if err != nil {
		return checkout.CheckoutRequest{}, err
	}
	if p.Role == models.RoleShopper {
		if userID != "" && userID != p.UserID {
			return checkout.CheckoutRequest{}, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Field: "user_id",
				Message: "a shopper validates only their own coupons"}
		}
		userID = p.UserID
	}
	a, crt, err := cartRequest(amount, cart)
	if err != nil {
		return checkout.CheckoutRequest{}, err
	}
	return checkout.CheckoutRequest{OrderAmountCents: a, Cart: crt, CouponCodes: codes, UserID: userID, Actor: p.Name}, nil
}

// validateCheckout prices a cart of coupons for an order without changing
// anything: 200 with "ok" or the word a hold would answer. A shopper's
// session validates only its own coupons. Each code counts against the
// caller's and the user's validation limits (docs/checkout.md, "Validate").
func (s *Server) validateCheckout(c *gin.Context) {
	var req validateRequest
	sr, ok := bindCheckout(c, &req)
	if !ok {
		return
	}
	if req.Choose != nil {
		sr.Choose = *req.Choose
	}
	if req.OrderID != nil {
		sr.OrderID = *req.OrderID
		if sr.OrderID == "" {
			web.RespondError(c, models.Invalid("order_id", "must be 1 to 64 characters (or left out)"))
			return
		}
	}
	if err := s.admitValidate(c, sr.UserID, len(req.CouponCodes)); err != nil {
		web.RespondError(c, err)
		return
	}
	res, err := s.checkout.Validate(c.Request.Context(), sr)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, res.Result, checkoutPayload(res))
}

// admitValidate takes n validated codes (at most an order's cap) from the
// budget of the caller (the API token, or the page session's user) and of
// userID, when given and well formed; it returns the refusal when a budget
// is spent (429 rate_limited with Retry-After) or Redis cannot be asked.
func (s *Server) admitValidate(c *gin.Context, userID string, n int) error {
	if s.validates == nil {
		return nil
	}
	n = min(max(n, 1), s.checkout.MaxCouponCodes())
	p := web.Principal(c)
	caller := "session:" + p.Name
	if viaToken(c) {
		caller = "token:bootstrap"
		if p.TokenID > 0 {
			caller = "token:" + strconv.FormatInt(p.TokenID, 10)
		}
	}
	if err := s.validates.AllowCaller(c.Request.Context(), caller, n); err != nil {
		s.claims.countRefusal(err, "rate_limited_validate_caller")
		return err
	}
	if userID == "" || models.ValidateUserID("user_id", userID) != nil {
		return nil
	}
	if err := s.validates.AllowUser(c.Request.Context(), userID, n); err != nil {
		s.claims.countRefusal(err, "rate_limited_validate_user")
		return err
	}
	return nil
}

// usableCoupons lists a user's coupons that apply to an order amount, best
// first, with the best combination. A shopper sees only their own.
func (s *Server) usableCoupons(c *gin.Context) {
	userID := c.Param("user_id")
	if p := web.Principal(c); p.Role == models.RoleShopper && p.UserID != userID {
		web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Message: "a shopper sees only their own coupons"})
		return
	}
	raw := c.Query("order_amount_cents")
	amount, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		web.RespondError(c, models.Invalid("order_amount_cents", "must be a whole number of cents between 1 and %d", int64(models.MaxMoneyCents)))
		return
	}
	s.answerUsable(c, userID, amount, checkout.Cart{}, c.Query("choose"))
}

// priceUsableCoupons is usableCoupons for a cart given in the body (a cart
// of lines does not fit a query string): the user's coupons that apply to
// it, each priced alone on it, best first, with the best combination.
func (s *Server) priceUsableCoupons(c *gin.Context) {
	userID := c.Param("user_id")
	if p := web.Principal(c); p.Role == models.RoleShopper && p.UserID != userID {
		web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Message: "a shopper sees only their own coupons"})
		return
	}
	req, amount, cart, ok := bindOrder[usableRequest](c)
	if !ok {
		return
	}
	var choose string
	if req.Choose != nil {
		choose = *req.Choose
	}
	s.answerUsable(c, userID, amount, cart, choose)
}

// answerUsable answers the user's usable coupons on the order, the best
// combination as choose says (all or empty: UsableForCart; best:
// UsableBestForCart).
func (s *Server) answerUsable(c *gin.Context, userID string, amount int64, cart checkout.Cart, choose string) {
	best, err := checkout.ParseChoose(choose)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	usable := s.checkout.UsableForCart
	if best {
		usable = s.checkout.UsableBestForCart
	}
	out, err := usable(c.Request.Context(), userID, amount, cart)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	respondUsable(c, out)
}

// respondUsable answers a user's usable coupons.
func respondUsable(c *gin.Context, out *checkout.Usable) {
	coupons := out.Coupons
	if coupons == nil {
		coupons = []checkout.UsableCoupon{}
	}
	best := out.Best
	if best == nil {
		best = []string{}
	}
	offers := out.Automatic
	if offers == nil {
		offers = []checkout.UsableOffer{}
	}
	left := out.AutomaticNotApplied
	if left == nil {
		left = []checkout.OfferNotApplied{}
	}
	web.Respond(c, http.StatusOK, "ok", usableAnswer{checkout.Usable{Currency: out.Currency, Coupons: coupons, Best: best, BestDiscountCents: out.BestDiscountCents,
		LeftOut: out.LeftOut, Automatic: offers, AutomaticNotApplied: left}})
}

// holdCoupons holds every coupon of the request for the order, or none: 201
// "held"; the same order, codes and amount again → 200 "duplicate" with the
// first answer.
func (s *Server) holdCoupons(c *gin.Context) {
	var req holdRequest
	sr, ok := bindCheckout(c, &req)
	if !ok {
		return
	}
	sr.OrderID = *req.OrderID
	if req.TTLSeconds != nil {
		if *req.TTLSeconds < 5 || *req.TTLSeconds > 86400 {
			web.RespondError(c, models.Invalid("ttl_seconds", "must be between 5 and 86400 (or left out: 900)"))
			return
		}
		sr.TTLSeconds = *req.TTLSeconds
	}
	res, err := s.checkout.Hold(c.Request.Context(), sr)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	status := http.StatusCreated
	if res.Duplicate {
		status = http.StatusOK
	}
	web.Respond(c, status, web.Replayed(res.Duplicate, "held"), checkoutPayload(res))
}

// getHold shows an order's hold and its state.
func (s *Server) getHold(c *gin.Context) {
	res, err := s.checkout.GetHold(c.Request.Context(), c.Param("order_id"))
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", checkoutPayload(res))
}

// confirmHold turns the order's held coupons into redemptions when its
// payment succeeded: 200 "redeemed" (late when the hold had expired and the
// coupons were still free); again → 200 "duplicate".
func (s *Server) confirmHold(c *gin.Context) {
	var req confirmRequest
	if c.Request.ContentLength != 0 && !web.BindJSON(c, &req) {
		return
	}
	sr := checkout.ConfirmRequest{OrderID: c.Param("order_id"), Cashier: web.Principal(c).Name}
	if req.OrderAmountCents != nil {
		if *req.OrderAmountCents < 1 || *req.OrderAmountCents > models.MaxMoneyCents {
			web.RespondError(c, models.Invalid("order_amount_cents", "must be between 1 and %d (or left out)", int64(models.MaxMoneyCents)))
			return
		}
		sr.OrderAmountCents = *req.OrderAmountCents
	}
	cart, err := (&cartFields{Currency: req.Currency, Lines: req.Lines, ShippingCents: req.ShippingCents}).cart()
	if err != nil {
		web.RespondError(c, err)
		return
	}
	sr.Cart = cart
	res, err := s.checkout.Confirm(c.Request.Context(), sr)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "redeemed"), checkoutPayload(res))
}

// releaseHold gives the order's held coupons back when its payment failed:
// 200 "released"; again (or after the hold expired) → 200 "duplicate".
func (s *Server) releaseHold(c *gin.Context) {
	res, err := s.checkout.Release(c.Request.Context(), web.Principal(c).Name, c.Param("order_id"))
	if err != nil {
		web.RespondError(c, err)
		return
	}
	var payload releaseAnswer
	if res.Hold != nil {
		hold := checkoutPayload(res.Hold)
		payload.checkoutAnswer = &hold
	}
	web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "released"), payload)
}
