package pages

import (
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// showCouponQR answers the QR code of one of the shopper's own coupons as an
// SVG image: the shop's claim message shows it at once, without a trip to the
// wallet. Another shopper's coupon, or no coupon, is not found (the answer
// says nothing of whose it is).
func (p *Pages) showCouponQR(c *gin.Context) {
	d, err := p.core.GetCoupon(c.Request.Context(), c.Param("code"))
	if err == nil && d.Coupon.UserID != web.Principal(c).UserID {
		err = models.Errorf(models.CodeNotFound, "no coupon of yours has this code")
	}
	if models.IsCode(err, models.CodeNotFound) || models.IsCode(err, models.CodeInvalidRequest) {
		p.notFound(c, "coupon of yours")
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	// A standalone SVG document needs its namespace; the inline one does not.
	svg := strings.Replace(string(qrSVG(d.Coupon.Code)), "<svg ", `<svg xmlns="http://www.w3.org/2000/svg" `, 1)
	c.Header("Cache-Control", "private, no-store")
	c.Data(http.StatusOK, "image/svg+xml", []byte(svg))
}
