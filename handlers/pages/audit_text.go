package pages

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// auditLine is an audit entry told as a sentence: "{Actor} {Verb}
// {Object}", then its details, money formatted and coupons named by code.
type auditLine struct {
	ID      int64
	At      time.Time
	Actor   string
	Action  string
	Verb    string
	Object  auditLink
	Details []auditDetail
}

// auditLink is the object of an entry, linked to its console page when it
// has one.
type auditLink struct{ Text, Href string }

// auditDetail is one detail of an entry in words.
type auditDetail struct{ Label, Value string }

// auditVerbs say each action as a verb before its object.
var auditVerbs = map[string]string{
	"campaign.create":     "created",
	"campaign.update":     "renamed",
	"campaign.pause":      "paused",
	"campaign.resume":     "resumed",
	"campaign.delete":     "deleted",
	"campaign.budget":     "changed the budget of",
	"template.create":     "created",
	"template.update":     "changed",
	"template.pause":      "paused",
	"template.resume":     "resumed",
	"template.archive":    "archived",
	"template.stock":      "added stock to",
	"template.delete":     "deleted",
	"coupon.hold":         "held",
	"coupon.confirm":      "confirmed the hold of",
	"coupon.release":      "released the hold of",
	"coupon.hold_expire":  "let the hold expire of",
	"coupon.refund":       "refunded",
	"coupon.redeem":       "redeemed at the till",
	"coupon.revoke":       "revoked",
	"coupon.return_stock": "returned to the pool the stock of",
	"order.return":        "recorded a partial return of",
	"reconcile.repair":    "repaired the counters of",
	"token.create":        "created",
	"token.revoke":        "revoked",
	"user.create":         "created",
	"webhook.create":      "registered",
	"webhook.update":      "changed",
	"webhook.delete":      "deleted",
	"webhook.disable":     "disabled, after failing too long,",
	"webhook.resend":      "sent a delivery again to",
	"webhook.test":        "sent a test event to",
}

// auditLabels name the details of the entries; a key not here is shown
// with its underscores as spaces.
var auditLabels = map[string]string{
	"order": "order", "order_amount_cents": "order amount", "discount_cents": "discount", "reason": "reason",
	"user": "holder", "template": "template", "status_was": "status before", "return_stock": "stock returned",
	"released_hold_of_order": "released the hold of order", "redeemed_by": "redeemed by", "late": "after the hold expired",
	"expires_at": "held until", "delta": "added", "total_stock": "stock now", "stock": "stock", "limit": "per person",
	"budget_cents": "budget", "budget_was_cents": "budget before", "used_cents": "taken by its coupons", "returned_amount_cents": "returned", "kept_amount_cents": "kept",
	"discount_kept_cents": "discount kept", "clawback_cents": "taken back", "full": "whole order returned",
	"users_drifted": "holders drifted", "in_flight": "being claimed", "in_flight_cents": "being claimed",
	"db_live": "using stock", "policy": "refund policy",
	"lines": "lines returned", "refund_cents": "paid back", "discount_returned_cents": "discount given back",
	"shipping_discount_returned_cents": "shipping discount given back",
}

// auditLines tells entries as sentences; codes gives the codes of the
// coupons they name.
func (p *Pages) auditLines(entries []models.AuditEntry, codes map[int64]string) []auditLine {
	out := make([]auditLine, len(entries))
	for i, e := range entries {
		verb, ok := auditVerbs[e.Action]
		if !ok {
			verb = strings.ReplaceAll(e.Action, ".", " ")
		}
		obj := auditObject(e.Target, codes)
		if e.Action == "template.delete" || e.Action == "campaign.delete" {
			obj.Href = "" // its page is gone with it (docs/flows.md#delete)
		}
		out[i] = auditLine{ID: e.ID, At: e.CreatedAt, Actor: e.Actor, Action: e.Action, Verb: verb,
			Object: obj, Details: p.auditDetails(e.Detail)}
	}
	return out
}

// auditObject names an entry's target in words, with its console page.
func auditObject(target string, codes map[int64]string) auditLink {
	kind, id, _ := strings.Cut(target, ":")
	n, numErr := strconv.ParseInt(id, 10, 64)
	switch {
	case kind == "coupon" && numErr == nil:
		if code, ok := codes[n]; ok {
			return auditLink{Text: "coupon " + codeGroups(code), Href: "/admin/coupons?code=" + code}
		}
		return auditLink{Text: "coupon #" + id}
	case kind == "template" && numErr == nil:
		return auditLink{Text: "template #" + id, Href: "/admin/templates/" + id}
	case kind == "campaign" && numErr == nil:
		return auditLink{Text: "campaign #" + id, Href: "/admin/campaigns/" + id}
	case kind == "webhook" && numErr == nil:
		return auditLink{Text: "webhook #" + id, Href: "/admin/webhooks/" + id}
	case kind == "token" && numErr == nil:
		return auditLink{Text: "token #" + id, Href: "/admin/tokens#token-" + id}
	case kind == "user":
		return auditLink{Text: "user " + id, Href: "/admin/coupons?user=" + url.QueryEscape(id)}
	case kind == "order":
		return auditLink{Text: "order " + id, Href: "/admin/audit?target=" + url.QueryEscape(target)}
	}
	return auditLink{Text: target}
}

// auditDetails says an entry's detail in words: amounts as money, yes and
// no for true and false, times as the pages write them.
func (p *Pages) auditDetails(detail string) []auditDetail {
	fields := models.ParseAuditDetail(detail)
	out := make([]auditDetail, 0, len(fields))
	for _, f := range fields {
		label, ok := auditLabels[f.Key]
		if !ok {
			label = strings.ReplaceAll(strings.TrimSuffix(f.Key, "_cents"), "_", " ")
		}
		value := f.Value
		switch {
		case strings.HasSuffix(f.Key, "_cents"):
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				value = p.money.format(n)
			}
		case value == "true":
			value = "yes"
		case value == "false":
			value = "no"
		case f.Key == "template" || f.Key == "campaign":
			value = "#" + value
		case f.Key == "expires_at":
			if t, err := time.Parse(time.RFC3339Nano, value); err == nil {
				value = p.dateTime(t)
			}
		case f.Key == "reason" || f.Key == "name":
			value = fmt.Sprintf("“%s”", value)
		}
		out = append(out, auditDetail{Label: label, Value: value})
	}
	return out
}
