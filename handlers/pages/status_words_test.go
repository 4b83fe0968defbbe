package pages_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/claims"
)

// TestPagesStatusWords: the console's coupons list names each coupon's
// template and says its status in the wallet's words, the status filter
// offers the same words, an archived template reads "Archived" (not
// "Ended"), and a used coupon without admin history does not read "nothing
// since".
func TestPagesStatusWords(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	camp, err := e.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Words"})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: "Five off hats", Kind: "fixed",
		FaceValueCents: 500, TotalStock: 10, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: "ann", IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	admin1 := e.Client(t)
	admin1.Login("admin")
	p := admin1.Get(fmt.Sprintf("/admin/coupons?template=%d", tp.ID))
	row := fmt.Sprintf(`<td data-label="Template"><a href="/admin/templates/%d">Five off hats</a></td>`, tp.ID)
	badge := `<td data-label="Status"><span class="badge badge-issued">Ready to use</span></td>`
	if !strings.Contains(p.Body, row) || !strings.Contains(p.Body, badge) || !strings.Contains(p.Body, `<option value="issued">Ready to use</option>`) {
		t.Fatalf("coupons list: %v", p)
	}
	if _, err := e.Service.Redeem(ctx, redeemRequest(cp.Coupon.Code, "o-1", 2_000)); err != nil {
		t.Fatal(err)
	}
	p = admin1.Get("/admin/coupons?code=" + cp.Coupon.Code)
	if !strings.Contains(p.Body, `<span class="badge badge-used">Used</span> on order o-1`) || strings.Contains(p.Body, "Claimed, nothing since") {
		t.Fatalf("used coupon: %v", p)
	}
	archived := models.TemplateArchived
	if _, err := e.Service.UpdateTemplate(ctx, "test", tp.ID, admin.TemplatePatch{Status: &archived}); err != nil {
		t.Fatal(err)
	}
	p = admin1.Get(fmt.Sprintf("/admin/campaigns/%d", camp.ID))
	if !strings.Contains(p.Body, `Five off hats</a> <span class="badge badge-closed">Archived</span>`) {
		t.Fatalf("archived template: %v", p)
	}
}
