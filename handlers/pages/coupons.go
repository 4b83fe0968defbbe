package pages

import (
	"net/http"
	"strings"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// couponsPage is the data of coupons.html: look a coupon up by its code, and
// revoke it.
type couponsPage struct {
	basePage
	Lookup string
	Found  *services.CouponDetail
	Revoke revokeForm
}

// revokeForm is the revoke form, as typed.
type revokeForm struct {
	Code, Reason string
	ReturnStock  bool
	Errors       formErrors
}

var revokeFields = map[string]string{"code": "code", "coupon_code": "code", "reason": "reason"}

// showCoupons shows the lookup and, for a code given, the coupon with the
// revoke form filled in.
func (p *Pages) showCoupons(c *gin.Context) {
	page := &couponsPage{basePage: basePage{Title: "Coupons", Nav: "coupons"}, Revoke: revokeForm{Errors: formErrors{}}}
	page.Lookup = strings.TrimSpace(c.Query("code"))
	if page.Lookup != "" {
		d, err := p.svc.GetCoupon(c.Request.Context(), page.Lookup)
		switch {
		case err == nil:
			page.Found = d
			page.Revoke.Code = d.Coupon.Code
		case models.IsCode(err, models.CodeNotFound):
			page.Revoke.Errors.add("lookup", "No coupon has this code.")
		case models.IsCode(err, models.CodeInvalidRequest):
			page.Revoke.Errors.fromError(err, map[string]string{"code": "lookup"})
		default:
			p.fail(c, err)
			return
		}
	}
	p.render(c, http.StatusOK, "coupons", page)
}
