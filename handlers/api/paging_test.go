package api_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestCursorPagesStableUnderInserts walks the campaigns 7 at a time while
// two more are created between pages: every campaign is seen exactly once,
// in id order, the new ones on the last pages, and the walk ends.
func TestCursorPagesStableUnderInserts(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	created := map[float64]bool{}
	create := func(i int) {
		out := e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, fmt.Sprintf(`{"name":"C%d"}`, i))
		created[out["campaign"].(map[string]any)["id"].(float64)] = true
	}
	for i := range 20 {
		create(i)
	}
	seen := map[float64]int{}
	var last float64
	after, pages := 0.0, 0
	for {
		page := e.MustCall(t, 200, "GET", fmt.Sprintf("/api/v1/campaigns?after=%v&limit=7", after), testsupport.AdminToken, "")
		pages++
		items := page["campaigns"].([]any)
		for _, it := range items {
			id := it.(map[string]any)["id"].(float64)
			if id <= last {
				t.Fatalf("page %d: id %v after %v: not in increasing order", pages, id, last)
			}
			last = id
			seen[id]++
		}
		if pages <= 3 { // inserts while walking
			create(100 + 2*pages)
			create(101 + 2*pages)
		}
		next, more := page["next"]
		if !more {
			if len(items) > 7 {
				t.Fatalf("last page of %d items", len(items))
			}
			break
		}
		if next != items[len(items)-1].(map[string]any)["id"] {
			t.Fatalf("next %v is not the page's last id", next)
		}
		after = next.(float64)
		if pages > 20 {
			t.Fatal("the walk does not end")
		}
	}
	if len(seen) != len(created) || len(created) != 26 {
		t.Fatalf("saw %d campaigns, created %d (want 26)", len(seen), len(created))
	}
	for id, n := range seen {
		if n != 1 || !created[id] {
			t.Fatalf("campaign %v seen %d times (created: %v)", id, n, created[id])
		}
	}
	if pages != 4 {
		t.Fatalf("%d pages, want 4 (26 campaigns, 7 a page)", pages)
	}
	for q, field := range map[string]string{"after=-1": "after", "limit=0": "limit", "limit=1001": "limit", "after=x": "after"} {
		for _, path := range []string{"/api/v1/campaigns", "/api/v1/tokens", "/api/v1/webhooks", "/api/v1/templates", "/api/v1/users/alice/coupons"} {
			code, out := e.Call(t, "GET", path+"?"+q, testsupport.AdminToken, nil, "")
			if code != 400 || out["field"] != field {
				t.Errorf("%s?%s: %d %v, want 400 naming %s", path, q, code, out, field)
			}
		}
	}
	// The last page has no next; an empty list is [].
	out := e.MustCall(t, 200, "GET", "/api/v1/webhooks", testsupport.AdminToken, "")
	if _, more := out["next"]; more || len(out["endpoints"].([]any)) != 0 {
		t.Fatalf("no webhooks: %v", out)
	}
}
