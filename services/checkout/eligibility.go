package checkout

import (
	"context"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/models/eligibility"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// Bounds of what the shop says of its customer (docs/eligibility.md).
const (
	MaxCustomerTags = 20
	MaxTagLen       = 40
	MaxOrdersCount  = 1_000_000
)

// The channels a request may name (Cart.Channel); the till's pages sell on
// ChannelTill, the shop's on ChannelWeb.
const (
	ChannelWeb  = eligibility.ChannelWeb
	ChannelTill = eligibility.ChannelTill
	ChannelAPI  = eligibility.ChannelAPI
)

// Customer is what the shop knows of the customer and sends with a
// checkout request: how many orders they placed and the tags it gave them.
type Customer struct {
	OrdersCount int64
	Tags        []string
}

// checkShopper checks the customer and channel a cart carries, naming the
// field at fault.
func checkShopper(c *Customer, channel string) error {
	switch channel {
	case "", eligibility.ChannelWeb, eligibility.ChannelTill, eligibility.ChannelAPI:
	default:
		return models.Invalid("channel", "must be web, till or api (or left out)")
	}
	if c == nil {
		return nil
	}
	if c.OrdersCount < 0 || c.OrdersCount > MaxOrdersCount {
		return models.Invalid("customer.orders_count", "must be between 0 and %d", MaxOrdersCount)
	}
	if len(c.Tags) > MaxCustomerTags {
		return models.Invalid("customer.tags", "must hold at most %d tags", MaxCustomerTags)
	}
	for i, tag := range c.Tags {
		if n := utf8.RuneCountInString(tag); n < 1 || n > MaxTagLen || !utf8.ValidString(tag) {
			return models.Invalid(fmt.Sprintf("customer.tags[%d]", i), "must be 1 to %d characters", MaxTagLen)
		}
		if err := models.CheckText(fmt.Sprintf("customer.tags[%d]", i), tag, models.SingleLine); err != nil {
			return err
		}
	}
	return nil
}

// campaignCounts is what the service counts of a customer in a campaign.
type campaignCounts struct {
	CampaignID  int64
	Claims      int
	Redemptions int
}

// facts is what an eligibility rule is judged on, read once per request
// (docs/eligibility.md): the shop's facts, the order's, the time in the
// deployment's zone and the customer's counts in the campaigns of the
// request's templates. The plan judges every coupon on it without a read.
type facts struct {
	env    eligibility.Env
	counts map[int64]campaignCounts
	rules  *eligibility.Cache
	log    *slog.Logger
}

// readFacts gathers the facts of a request: in cart the shop's, in pc the
// order priced; the counts of userID (none when anonymous) in the
// campaigns of the templates that carry a rule, in one SELECT, and only
// when one does.
func (s *Checkout) readFacts(ctx context.Context, userID string, cart *Cart, pc *pricing.Cart, ts []*models.Template, now time.Time) (*facts, error) {
	f := &facts{rules: &s.rules, log: s.Log, counts: map[int64]campaignCounts{}}
	f.env.Channel = cart.Channel
	if cart.Customer != nil {
		f.env.Customer.OrdersCount, f.env.Customer.Tags = int(cart.Customer.OrdersCount), cart.Customer.Tags
	}
	for _, l := range pc.Lines {
		f.env.Order.SubtotalCents += int(l.Quantity * max(l.UnitPriceCents, 0))
		f.env.Order.Items += int(l.Quantity)
	}
	f.env.Order.Currency = pc.Currency
	f.env.Now = eligibility.NowIn(now, s.Location())
	var campaigns []int64
	for _, t := range ts {
		if t != nil && t.Eligibility != "" {
			campaigns = append(campaigns, t.CampaignID)
		}
	}
	if userID == "" || len(campaigns) == 0 {
		return f, nil
	}
	var rows []campaignCounts
	if err := s.DB.WithContext(ctx).Raw(`SELECT t.campaign_id, COUNT(*) AS claims,
		SUM(CASE WHEN u.status = ? THEN 1 ELSE 0 END) AS redemptions
		FROM user_coupons u JOIN templates t ON t.id = u.template_id
		WHERE u.user_id = ? AND t.campaign_id IN ? GROUP BY t.campaign_id`,
		models.CouponUsed, userID, campaigns).Scan(&rows).Error; err != nil {
		return nil, core.DBError("coupons", err)
	}
	for _, r := range rows {
		f.counts[r.CampaignID] = r
	}
	return f, nil
}

// factsOr is f, or when a path read none, the facts of an anonymous
// customer with nothing said, over the service's rule cache: a rule is
// compiled once per template version whatever the path
// (docs/eligibility.md).
func (s *Checkout) factsOr(f *facts) *facts {
	if f != nil {
		return f
	}
	return &facts{rules: &s.rules, log: s.Log, counts: map[int64]campaignCounts{}}
}

// tillFacts is the facts of a check at the till, which names no customer:
// the channel till, the order and the time (no read).
func (s *Checkout) tillFacts(pc *pricing.Cart, now time.Time) *facts {
	f, _ := s.readFacts(context.Background(), "", &Cart{Channel: eligibility.ChannelTill}, pc, nil, now)
	return f
}

// envFor is the environment a template's rule is judged in: the facts,
// with the customer's counts in the template's campaign.
func (f *facts) envFor(t *models.Template) eligibility.Env {
	env := f.env
	c := f.counts[t.CampaignID]
	env.Customer.ClaimsInCampaign, env.Customer.RedemptionsInCampaign = c.Claims, c.Redemptions
	return env
}
