package main

import (
	"context"
	"fmt"
	"time"

	couponclient "github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// validateFaces are the fixed values of the three templates whose coupons
// each validate prices.
var validateFaces = [3]int{300, 400, 500}

// validateRule is the eligibility rule of the validaterule scenario's
// templates: the shop's tags and channel, and the customer's redemptions
// in the campaign, which the service counts once per request
// (docs/eligibility.md).
const validateRule = `"vip" in customer.tags && channel == "web" && customer.redemptions_in_campaign == 0`

// validateFacts are what each validation of validaterule says of its
// customer, meeting validateRule.
var validateFacts = shopFacts{customer: &couponclient.CustomerFields{Tags: []string{"member", "vip"}, OrdersCount: ptr(int64(3))},
	channel: ptr(couponclient.ChannelWeb)}

// runValidate is the validation of a cartLines-line cart with three
// coupons (one of each of three combinable templates, all the user's):
// z.validates requests spread over up to 1000 users, each answered ok with
// the three discounts. It writes nothing: afterwards every coupon of a
// sample of users is still issued, and no stock moved.
func (e *env) runValidate(ctx context.Context) *Summary {
	return e.runValidateRule(ctx, "validate", "", shopFacts{})
}

// runValidateRule is runValidate as scenario name, each template carrying
// the eligibility rule (none when ""), each validation the shop's facts.
func (e *env) runValidateRule(ctx context.Context, name, rule string, facts shopFacts) *Summary {
	n := e.z.validates
	users := min(n, 1000)
	cart, _ := benchcart.New(cartLines)
	lines := clientLines(apiLines(&cart))
	want := int64(validateFaces[0] + validateFaces[1] + validateFaces[2])
	s := &Summary{Name: name, OKWord: "ok", Concurrency: e.conc,
		Params: fmt.Sprintf("%d validates of a %d-line cart with shipping and 3 coupons (combinable, fixed %v off) over %d users", n, cartLines, validateFaces, users)}
	if rule != "" {
		s.Params += ", each template with the eligibility rule " + rule
	}
	prefix := "b" + e.runID + name[len("validate"):] + "v-"
	var tids [3]int64
	for k := range tids {
		tid, err := e.c.createTemplate(ctx, templateSpec{name: fmt.Sprintf("bench validate %d %s", k, e.runID),
			stock: users, limit: 1, faceValue: validateFaces[k], stacking: "combinable", eligibility: rule})
		if err != nil {
			s.Error = err.Error()
			return s
		}
		tids[k] = tid
	}
	codes := make([][]string, users)
	for k, tid := range tids {
		got, err := e.prefillKeyed(ctx, tid, users, prefix, fmt.Sprintf("%s%d-", prefix, k))
		if err != nil {
			s.Error = err.Error()
			return s
		}
		for u, c := range got {
			codes[u] = append(codes[u], c)
		}
	}
	s.Coupons = 3 * users
	var f faults
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	profDone := e.prof.start(ctx, s.Name)
	t, elapsed := drive(ctx, n, e.conc, func(ctx context.Context, _, i int) sample {
		u := i % users
		a := e.c.validateAs(ctx, codes[u], userName(prefix, u), lines, cart.ShippingCents, facts)
		kind := classify(&a, &f, "validate", "ok")
		if kind == "ok" && a.checkout.DiscountCents != want {
			f.add("validate: discount %d, want %d", a.checkout.DiscountCents, want)
		}
		return sample{kind: kind, d: a.d}
	})
	s.MaxRSSMB = rss.Stop()
	s.Profile = profDone()
	s.fill(t, elapsed)
	f.report(s)
	s.check("every validate ok", s.OK == n, "%d of %d answered ok", s.OK, n)
	// Nothing written: the stock and the coupons are as the claims left them.
	for k, tid := range tids {
		checkServerCount(ctx, s, e.c, tid, users)
		var sample []int
		held := map[int][]string{}
		states := map[string]couponState{}
		for u := 0; u < users; u += max(users/50, 1) {
			sample = append(sample, u)
			held[u] = []string{codes[u][k]}
			states[codes[u][k]] = couponState{status: "issued"}
		}
		checkUsers(ctx, s, e.c, tid, 1, prefix, sample, held, states, nil)
	}
	return s
}
