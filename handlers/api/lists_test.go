package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// ids are the ids of a list's items.
func ids(items any) []int64 {
	var out []int64
	for _, it := range items.([]any) {
		out = append(out, int64(it.(map[string]any)["id"].(float64)))
	}
	return out
}

// walkPages reads a list page by page (limit per page) from the start and
// returns each page's ids; it fails on a page whose next is not its last
// item's id, or a last page with a next.
func walkPages(t *testing.T, e *testsupport.HoldAPI, path, field string, limit int) [][]int64 {
	t.Helper()
	var pages [][]int64
	after := int64(0)
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for range 20 {
		out := e.MustCall(t, 200, "GET", fmt.Sprintf("%s%safter=%d&limit=%d", path, sep, after, limit), testsupport.AdminToken, "")
		page := ids(out[field])
		pages = append(pages, page)
		next, more := out["next"]
		if !more {
			if len(page) > limit {
				t.Fatalf("%s: last page %v over the limit %d", path, page, limit)
			}
			return pages
		}
		if len(page) != limit || int64(next.(float64)) != page[len(page)-1] {
			t.Fatalf("%s: page %v with next %v, want %d items and next the last id", path, page, next, limit)
		}
		after = int64(next.(float64))
	}
	t.Fatalf("%s: no last page after 20", path)
	return nil
}

// TestTemplateCouponsPagedByCursor: a template's coupons come as JSON,
// oldest first, 2 a page over 5 coupons (pages of 2, 2, 1, next on the
// first two only), filtered by effective status; an unknown status is 400
// naming status, an unknown template 404.
func TestTemplateCouponsPagedByCursor(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tpl := e.Template(t, 100, 0, models.StackingExclusive)
	other := e.Template(t, 200, 0, models.StackingExclusive)
	var codes []string
	for i := range 5 {
		codes = append(codes, e.Claim(t, tpl, fmt.Sprintf("u%d", i)))
		e.Claim(t, other, fmt.Sprintf("u%d", i))
	}
	e.MustCall(t, 200, "POST", "/api/v1/coupons/"+codes[1]+"/revoke", testsupport.AdminToken, `{"reason":"a test"}`)
	path := fmt.Sprintf("/api/v1/templates/%d/coupons", tpl)
	pages := walkPages(t, e, path, "coupons", 2)
	if len(pages) != 3 || len(pages[0]) != 2 || len(pages[1]) != 2 || len(pages[2]) != 1 {
		t.Fatalf("pages %v, want 2, 2 and 1 coupons", pages)
	}
	all := e.MustCall(t, 200, "GET", path, testsupport.AdminToken, "")
	if _, more := all["next"]; more {
		t.Fatalf("one page of 5 has a next: %v", all)
	}
	list := all["coupons"].([]any)
	if len(list) != 5 {
		t.Fatalf("coupons %d, want 5", len(list))
	}
	for i, c := range list {
		c := c.(map[string]any)
		want := "issued"
		if i == 1 {
			want = "revoked"
		}
		if c["code"] != codes[i] || c["status"] != want || c["currency"] != list[0].(map[string]any)["currency"] || c["currency"] == "" || int64(c["template_id"].(float64)) != tpl {
			t.Fatalf("coupon %d: %v, want %s %s of template %d", i, c, codes[i], want, tpl)
		}
	}
	revoked := e.MustCall(t, 200, "GET", path+"?status=revoked", testsupport.AdminToken, "")["coupons"].([]any)
	if len(revoked) != 1 || revoked[0].(map[string]any)["code"] != codes[1] {
		t.Fatalf("status=revoked: %v, want %s alone", revoked, codes[1])
	}
	if issued := walkPages(t, e, path+"?status=issued", "coupons", 3); len(issued) != 2 || len(issued[0]) != 3 || len(issued[1]) != 1 {
		t.Fatalf("status=issued by 3: %v, want pages of 3 and 1", issued)
	}
	e.Clock.Advance(31 * 24 * time.Hour)
	if expired := e.MustCall(t, 200, "GET", path+"?status=expired", testsupport.AdminToken, "")["coupons"].([]any); len(expired) != 4 {
		t.Fatalf("status=expired 31 days on: %d coupons, want 4", len(expired))
	}
	for _, q := range []struct{ query, field string }{{"?status=lost", "status"}, {"?limit=0", "limit"}, {"?after=-1", "after"}} {
		code, out := e.Call(t, "GET", path+q.query, testsupport.AdminToken, nil, "")
		if code != 400 || out["field"] != q.field {
			t.Fatalf("%s: %d %v, want 400 naming %s", q.query, code, out, q.field)
		}
	}
	if code, out := e.Call(t, "GET", "/api/v1/templates/999999/coupons", testsupport.AdminToken, nil, ""); code != 404 || out["result"] != "not_found" {
		t.Fatalf("unknown template: %d %v, want 404 not_found", code, out)
	}
}

// TestEventsFromLatest: from=latest answers no events and, as next, the
// newest id; reading on from it lists exactly the events written after
// (one claim: one coupon.claimed). from with after, or another value, is
// 400 naming from.
func TestEventsFromLatest(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tpl := e.Template(t, 100, 0, models.StackingExclusive)
	e.Claim(t, tpl, "alice")
	e.Claim(t, tpl, "bob")
	feed := e.MustCall(t, 200, "GET", "/api/v1/events?limit=1000", testsupport.AdminToken, "")
	evs := ids(feed["events"])
	if len(evs) != 2 {
		t.Fatalf("feed %v, want the two claims' events", evs)
	}
	latest := e.MustCall(t, 200, "GET", "/api/v1/events?from=latest", testsupport.AdminToken, "")
	if got := ids(latest["events"]); len(got) != 0 || int64(latest["next"].(float64)) != evs[len(evs)-1] {
		t.Fatalf("from=latest: %v, want no events and next %d", latest, evs[len(evs)-1])
	}
	code := e.Claim(t, tpl, "carol")
	after := e.MustCall(t, 200, "GET", fmt.Sprintf("/api/v1/events?after=%v", latest["next"]), testsupport.AdminToken, "")
	list := after["events"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["type"] != "coupon.claimed" ||
		list[0].(map[string]any)["data"].(map[string]any)["code"] != code {
		t.Fatalf("after latest: %v, want the one claim of %s", after, code)
	}
	for _, q := range []string{"?from=latest&after=1", "?from=now"} {
		st, out := e.Call(t, "GET", "/api/v1/events"+q, testsupport.AdminToken, nil, "")
		if st != 400 || out["field"] != "from" {
			t.Fatalf("%s: %d %v, want 400 naming from", q, st, out)
		}
	}
}

// TestEventsFromLatestStopsBeforeAGap: an id missing below the newest
// event (a transaction still running) holds latest below it while the
// event above is younger than the feed's gap wait, so that the missing
// event, committed later, is not skipped; past the wait, latest is the
// newest id.
func TestEventsFromLatestStopsBeforeAGap(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	e.Claim(t, e.Template(t, 100, 0, models.StackingExclusive), "alice")
	db := e.Env.Backends.DB
	var newest int64
	if err := db.Model(&models.Event{}).Select("MAX(id)").Scan(&newest).Error; err != nil {
		t.Fatal(err)
	}
	// newest+1 is the running transaction's; newest+2 committed.
	if err := db.Create(&models.Event{ID: newest + 2, Type: "webhook.test", CreatedAt: e.Clock.Now(), Data: json.RawMessage(`{"endpoint_id":1,"actor":"admin","message":"a test"}`)}).Error; err != nil {
		t.Fatal(err)
	}
	latest := e.MustCall(t, 200, "GET", "/api/v1/events?from=latest", testsupport.AdminToken, "")
	if int64(latest["next"].(float64)) != newest {
		t.Fatalf("from=latest with a gap at %d: %v, want next %d", newest+1, latest, newest)
	}
	e.Clock.Advance(3 * time.Minute)
	latest = e.MustCall(t, 200, "GET", "/api/v1/events?from=latest", testsupport.AdminToken, "")
	if int64(latest["next"].(float64)) != newest+2 {
		t.Fatalf("from=latest past the gap wait: %v, want next %d", latest, newest+2)
	}
}

// TestWebhookAttemptsPagedByCursor: an endpoint's 5 log lines come newest
// first, 2 a page (2, 2, 1; next the last id of a full page), and the
// other endpoint's line is never among them.
func TestWebhookAttemptsPagedByCursor(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	var eps []int64
	for range 2 {
		out := e.MustCall(t, 201, "POST", "/api/v1/webhooks", testsupport.AdminToken, `{"url":"https://8.8.8.8/h"}`)
		eps = append(eps, int64(out["endpoint"].(map[string]any)["id"].(float64)))
	}
	db := e.Env.Backends.DB
	var want []int64
	for i := range 6 {
		ep := eps[0]
		if i == 3 {
			ep = eps[1]
		}
		a := models.WebhookAttempt{DeliveryID: int64(i + 1), EndpointID: ep, EventID: int64(i + 1), EventType: "coupon.claimed",
			AttemptedAt: e.Clock.Now(), StatusCode: 500}
		if err := db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
		if ep == eps[0] {
			want = append([]int64{a.ID}, want...)
		}
	}
	pages := walkPages(t, e, fmt.Sprintf("/api/v1/webhooks/%d/attempts", eps[0]), "attempts", 2)
	if fmt.Sprint(pages) != fmt.Sprint([][]int64{want[:2], want[2:4], want[4:]}) {
		t.Fatalf("pages %v, want %v newest first by 2", pages, want)
	}
	if code, out := e.Call(t, "GET", "/api/v1/webhooks/999999/attempts", testsupport.AdminToken, nil, ""); code != 404 {
		t.Fatalf("unknown endpoint: %d %v, want 404", code, out)
	}
}

// TestListsAreNewestFirst: the tokens and a user's coupons come newest
// first, as their operations say, and page by cursor downwards: a page
// holds the items below after, and none is seen twice.
func TestListsAreNewestFirst(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	for _, name := range []string{"till-2", "till-3"} {
		e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"`+name+`"}`)
	}
	tpl := e.Template(t, 100, 0, models.StackingExclusive)
	var codes []string
	for range 3 {
		codes = append(codes, e.Claim(t, tpl, "alice"))
	}
	descending := func(what string, xs []int64, n int) {
		t.Helper()
		if len(xs) != n {
			t.Fatalf("%s: %v, want %d", what, xs, n)
		}
		for i := 1; i < len(xs); i++ {
			if xs[i] >= xs[i-1] {
				t.Fatalf("%s: ids %v, want newest first", what, xs)
			}
		}
	}
	// The app token, the cashier's and the two above.
	tokens := ids(e.MustCall(t, 200, "GET", "/api/v1/tokens", testsupport.AdminToken, "")["tokens"])
	descending("tokens", tokens, 4)
	if pages := walkPages(t, e, "/api/v1/tokens", "tokens", 3); fmt.Sprint(pages) != fmt.Sprint([][]int64{tokens[:3], tokens[3:]}) {
		t.Fatalf("tokens by 3: %v, want %v", pages, tokens)
	}
	coupons := e.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", testsupport.AdminToken, "")["coupons"].([]any)
	descending("coupons", ids(coupons), 3)
	for i, c := range coupons {
		if c.(map[string]any)["code"] != codes[2-i] {
			t.Fatalf("coupon %d: %v, want %s (claimed %d-th)", i, c, codes[2-i], 3-i)
		}
	}
	if pages := walkPages(t, e, "/api/v1/users/alice/coupons", "coupons", 2); fmt.Sprint(pages) !=
		fmt.Sprint([][]int64{ids(coupons)[:2], ids(coupons)[2:]}) {
		t.Fatalf("coupons by 2: %v, want %v", pages, ids(coupons))
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Summary     string `json:"summary"`
			Description string `json:"description"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(handlers.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{doc.Paths["/api/v1/tokens"]["get"].Summary, doc.Paths["/api/v1/users/{user_id}/coupons"]["get"].Description} {
		if !strings.Contains(strings.ToLower(op), "newest first") || strings.Contains(strings.ToLower(op), "oldest") {
			t.Fatalf("the document says %q, want newest first", op)
		}
	}
}
