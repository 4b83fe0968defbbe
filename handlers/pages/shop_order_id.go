package pages

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// shopOrderID is the form of the shop's own order numbers (newOrderID).
var shopOrderID = regexp.MustCompile(`^W-[0-9A-F]{10}$`)

// orderSig signs a shop order number for the session and the shopper it
// was issued to: the checkout form carries both, so that a shopper cannot
// choose an order number, another shopper's, the till's or any other
// (docs/pages.md, "Checkout").
func (p *Pages) orderSig(c *gin.Context, orderID string) string {
	sid, _ := p.session(c).Values[sidKey].(string)
	m := hmac.New(sha256.New, p.orderKey)
	m.Write([]byte(sid + "\x00" + web.Principal(c).Name + "\x00" + orderID))
	return hex.EncodeToString(m.Sum(nil))
}

// checkOrderID refuses a checkout form whose order number the server did
// not issue to this session: not of the shop's form, or not signed for it.
// The form is then shown again with a new number, and nothing is checked
// or placed.
func (p *Pages) checkOrderID(c *gin.Context, f *checkoutForm) {
	if _, broken := f.Errors[""]; broken {
		return // readCheckoutForm said so and made a new one
	}
	sig := strings.TrimSpace(c.PostForm("order_sig"))
	if shopOrderID.MatchString(f.OrderID) && hmac.Equal([]byte(sig), []byte(p.orderSig(c, f.OrderID))) {
		return
	}
	f.Errors.add("", "This order number was not issued to you: check the cart again to start a new order.")
	f.OrderID = newOrderID()
}
