package pages

import (
	"net/url"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// revokeRefusals say the refusals of a revocation beside their field; a
// second revocation says when, by whom and why the first was made.
var revokeRefusals = map[models.Code]refusal{
	models.CodeNotFound:    {"code", "No coupon has this code."},
	models.CodeAlreadyUsed: {"code", ""},
	models.CodeRevoked:     {"code", ""},
}

// revokeCoupon takes a coupon away from its holder, with the public reason
// the shopper's wallet says and the admin's internal note in the audit log;
// with "return stock" its slot goes back to the pool.
func (p *Pages) revokeCoupon(c *gin.Context) {
	f := revokeForm{Code: strings.TrimSpace(c.PostForm("code")), Reason: c.PostForm("reason"),
		PublicReason: c.PostForm("public_reason"), ReturnStock: c.PostForm("return_stock") != "", Errors: formErrors{}}
	page := &couponsPage{basePage: basePage{Title: "Coupons", Nav: "coupons"}, Revoke: f}
	handleForm(p, c, formPost[noInput]{errs: f.Errors,
		read: func() noInput {
			if f.Code == "" {
				f.Errors.add("code", "Enter the coupon code.")
			}
			if _, ok := models.RevokePublicText(f.PublicReason); !ok {
				f.Errors.add("public_reason", "Choose what the shopper is told.")
			}
			if strings.TrimSpace(f.Reason) == "" {
				f.Errors.add("reason", "Say why, for the audit log.")
			}
			return noInput{}
		},
		act: func(noInput) (outcome, error) {
			res, err := p.admin.RevokeWith(c.Request.Context(), web.Principal(c).Name, f.Code, f.ReturnStock, f.PublicReason, f.Reason)
			if err != nil {
				return outcome{}, err
			}
			code := codeGroups(res.Coupon.Code)
			msg := "Revoked " + code + " of " + res.Coupon.UserID + "."
			if res.StockReturned {
				msg += " Its stock went back to the pool."
			} else {
				msg += " It still counts against the stock and the holder's limit."
			}
			return done(msg, "/admin/coupons?code="+res.Coupon.Code), nil
		},
		refused: func(_ noInput, err error) bool { return f.Errors.fromRefusal(err, revokeRefusals, revokeFields) },
		show:    func(status int) { p.renderRevoke(c, status, page) },
	})
}

// renderRevoke answers the coupons page with the revoke form sent back, and
// the coupon it names shown with its history when it exists.
func (p *Pages) renderRevoke(c *gin.Context, status int, page *couponsPage) {
	if code := page.Revoke.Code; code != "" {
		c.Request.URL.RawQuery = "code=" + url.QueryEscape(code)
	}
	if !p.fillCoupons(c, page) {
		return
	}
	// The lookup's own complaint about the code is the revoke form's.
	delete(page.Filter.Errors, "code")
	p.render(c, status, "coupons", page)
}
