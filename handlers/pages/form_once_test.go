package pages_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestCreateOnTemplateForms: the forms posted on a template that make
// something (stock, codes, coupons for a list) act once per form token: the
// same filling sent again goes where the first went and makes nothing more;
// an address without a template id answers 404 and makes nothing.
func TestCreateOnTemplateForms(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	tp := e.Template(t, "$5 off")
	page := fmt.Sprintf("/admin/templates/%d", tp.ID)
	jobs := page + "/jobs"
	const token = "0123456789abcdef0123456789abcdef"
	countJobs := func() int64 {
		t.Helper()
		return countRows(t, e, &models.Job{})
	}
	stockOf := func() int64 {
		t.Helper()
		got, err := e.Service.GetTemplate(context.Background(), tp.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.TotalStock
	}
	stock0 := stockOf()

	for _, tc := range []struct {
		name, from, to string
		form           url.Values
		// wantTo is where the first post goes ("" for the job's page);
		// wantSaid what that page says.
		wantTo, wantSaid string
		wantJobs         int64
		wantStock        int64
	}{
		{name: "stock", from: page, to: page + "/stock", form: url.Values{"delta": {"5"}, "reason": {"restock"}},
			wantTo: page, wantSaid: fmt.Sprintf("Added 5 to “%s”: the stock is now %d.", tp.Name, stock0+5),
			wantJobs: 0, wantStock: stock0 + 5},
		{name: "codes", from: jobs, to: page + "/codes", form: url.Values{"count": {"3"}, "pattern": {""}},
			wantSaid: "Making 3 codes: job %d is queued.", wantJobs: 1, wantStock: stock0 + 5},
		{name: "issue", from: jobs, to: page + "/issue", form: url.Values{"user_ids": {"ann\nbob"}},
			wantSaid: "Issuing to 2 users: job %d is queued.", wantJobs: 2, wantStock: stock0 + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("form_token", token)
			first := admin.Form(tc.from, tc.to, tc.form)
			if first.Status != http.StatusSeeOther {
				t.Fatalf("first post: %v", first)
			}
			to, said := tc.wantTo, tc.wantSaid
			if to == "" {
				var id int64
				if _, err := fmt.Sscanf(first.Location(), "/admin/jobs/%d", &id); err != nil {
					t.Fatalf("the first post went to %q, not a job's page", first.Location())
				}
				to, said = first.Location(), fmt.Sprintf(tc.wantSaid, id)
			}
			if first.Location() != to {
				t.Fatalf("the first post went to %q, want %q", first.Location(), to)
			}
			if p := admin.Get(to); !strings.Contains(p.Text(), said) {
				t.Fatalf("the page after the first post does not say %q: %v", said, p)
			}
			again := admin.Form(tc.from, tc.to, tc.form)
			if again.Status != http.StatusSeeOther || again.Location() != to {
				t.Fatalf("the same filling again: %v, want a 303 to %s", again, to)
			}
			if p := admin.Get(to); !strings.Contains(p.Text(), "Already created") {
				t.Fatalf("the page after the second post does not say it was done already: %v", p)
			}
			if n, s := countJobs(), stockOf(); n != tc.wantJobs || s != tc.wantStock {
				t.Fatalf("%d jobs and a stock of %d, want %d and %d", n, s, tc.wantJobs, tc.wantStock)
			}
		})
	}

	t.Run("no template id", func(t *testing.T) {
		for _, to := range []string{"/admin/templates/0/stock", "/admin/templates/x/codes", "/admin/templates/-1/issue"} {
			p := admin.Form(page, to, url.Values{"delta": {"5"}, "reason": {"restock"}, "count": {"3"}, "user_ids": {"ann"}})
			if p.Status != http.StatusNotFound || !strings.Contains(p.Text(), "There is no template at this address.") {
				t.Errorf("POST %s: %v, want the not-found page", to, p)
			}
		}
		if n, s := countJobs(), stockOf(); n != 2 || s != stock0+5 {
			t.Fatalf("%d jobs and a stock of %d after posts to no template, want 2 and %d", n, s, stock0+5)
		}
	})
}
